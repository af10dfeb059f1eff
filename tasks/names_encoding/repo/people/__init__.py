from .store import load_names, save_names
