"""What keeps rua from being turned against the network it runs in, or from printing secrets.

addresses.py judges the addresses rua may connect to (pure), connect.py opens connections only
to judged addresses within one total deadline, shown.py masks the secrets of URLs it prints.
Nothing here imports another package of rua, so every package may use it.
"""
