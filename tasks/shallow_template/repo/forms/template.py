TEMPLATE = {"title": "Application", "contact": {"name": "", "email": ""}, "tags": []}
