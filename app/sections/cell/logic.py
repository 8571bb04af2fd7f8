"""The lesson's first cell, as the reader can edit and run it ("Pruébalo").

The cell fills the window after «La Nela» with the model's prefill and one-token step
(the lesson's `llenar` and `avanzar`), sampling with the page's seed and top-p, then
compares eight positions with the full pass. Changing the while's n_ctx to n_ctx + 1
meets the genuine IndexError of the position table. It runs in the code sandbox
(app/sandbox) on the sandbox's own copy of the model; this module only writes the
cell, builds the request and reads what the error means. No Panel here.
"""

from __future__ import annotations

import re

CELL = {
    "es": """ids = tokenizer.encode("La Nela")
logits, cache = llenar(ids)          # prefill: el prompt en una sola pasada
z = logits[-1]
guardados = {{len(ids): z}}            # los logits de cada posición, con caché
while len(ids) < {n}:
    x = sample(z, rng, top_p={top_p})    # sortea el token siguiente
    ids.append(x)
    z = avanzar(x, cache)            # una fila: su K y su V van a la caché
    guardados[len(ids)] = z

print(tokenizer.decode(ids))
completa = adelante(ids)             # sin caché: el texto entero de una vez
for t in {positions}:
    print(t, np.abs(guardados[t] - completa[t - 1]).max())
print("caché de la capa 1:", cache.k[0].shape, "·", cache.n_numbers, "números en total")
""",
    "en": """ids = tokenizer.encode("La Nela")
logits, cache = prefill(ids)         # the prompt in a single pass
z = logits[-1]
kept = {{len(ids): z}}                 # each position's logits, with the cache
while len(ids) < {n}:
    x = sample(z, rng, top_p={top_p})    # sample the next token
    ids.append(x)
    z = step(x, cache)               # one row: its K and V go into the cache
    kept[len(ids)] = z

print(tokenizer.decode(ids))
full = forward(ids)                  # no cache: the whole text at once
for t in {positions}:
    print(t, np.abs(kept[t] - full[t - 1]).max())
print("layer 1 cache:", cache.k[0].shape, "·", cache.n_numbers, "numbers in total")
""",
    "pt": """ids = tokenizer.encode("La Nela")
logits, cache = preencher(ids)       # prefill: o prompt numa só passagem
z = logits[-1]
guardados = {{len(ids): z}}            # os logits de cada posição, com cache
while len(ids) < {n}:
    x = sample(z, rng, top_p={top_p})    # sorteia o token seguinte
    ids.append(x)
    z = avancar(x, cache)            # uma linha: o seu K e o seu V vão para a cache
    guardados[len(ids)] = z

print(tokenizer.decode(ids))
completa = adiante(ids)              # sem cache: o texto inteiro de uma vez
for t in {positions}:
    print(t, np.abs(guardados[t] - completa[t - 1]).max())
print("cache da camada 1:", cache.k[0].shape, "·", cache.n_numbers, "números no total")
""",
}

LIMIT_S = 10  # the cell fills a whole window: on a slow phone it takes a few seconds


def compare_at(n_ctx: int) -> tuple[int, ...]:
    """Eight positions spread over the window: 8, 16, ..., 64 for the lesson's model."""
    step = max(1, n_ctx // 8)
    return tuple(range(step, n_ctx + 1, step))[-8:]


def cell(lang: str, n_ctx: int, top_p: float) -> str:
    """The cell in the page's language, for a model with n_ctx positions."""
    return CELL.get(lang, CELL["es"]).format(n=n_ctx, top_p=f"{top_p:g}", positions=compare_at(n_ctx))


WHILE = re.compile(r"(while\s+len\(ids\)\s*<\s*)(\d+)")


def one_more(code: str, n_ctx: int) -> str:
    """The lesson's edit: the while's limit n_ctx becomes n_ctx + 1 (the cell's own line, if it is there)."""
    return WHILE.sub(lambda m: m.group(1) + str(n_ctx + 1) if int(m.group(2)) == n_ctx else m.group(0), code)


def payload(code: str, seed: int, lang: str) -> dict:
    """The sandbox's request: the code, run on the lesson's model and names (app/sandbox/runner.py)."""
    return {"code": code, "lesson": {"seed": int(seed), "lang": lang}}


def is_position_error(error_type: str, message: str, n_ctx: int) -> bool:
    """The lesson's error: the position table has n_ctx rows and the cell asked for one more."""
    return error_type == "IndexError" and f"index {n_ctx} is out of bounds for axis 0 with size {n_ctx}" in message
