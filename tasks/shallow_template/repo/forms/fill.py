import copy

from .template import TEMPLATE


def fill(template, name="", email=""):
    form = copy.copy(template)
    form["contact"]["name"] = name
    form["contact"]["email"] = email
    return form
