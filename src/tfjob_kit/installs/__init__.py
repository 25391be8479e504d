"""What the roles decide about installs already on a cluster, from the objects they read.

Pure functions over Kubernetes objects as dicts; the roles call them through the collection's
filter plugins (``plugins/filter/``), so their task files hold no logic of their own.
"""
