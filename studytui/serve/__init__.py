"""`studytui serve`: the study app in a browser (`server.py`: the local server and its guards;
`served.py`: the app as each browser tab runs it). textual-serve is imported only when it runs.
"""
