"""``snap serve``: the HTTP service (FastAPI, served by uvicorn).

Nothing is imported here: FastAPI, pydantic and uvicorn are loaded only by ``snap serve``, so
every other command starts without them.
"""
