"""Every string the explorable shows, in one place. Spanish first.

`tr(lang, key, **values)` formats one; numbers go through `num()` so each
language writes them its own way (Spanish as the course does: a narrow space
between thousands, a decimal point).
"""
from __future__ import annotations

LANGS = ("es", "en")
DEFAULT_LANG = "es"
NARROW_NBSP = "\u202f"

STRINGS: dict[str, dict[str, str]] = {
    "es": {
        "title": "La caché de claves y valores: cuánto cuesta cada token",
        "intro": ("El mini-GPT escribe tras «La Nela», un token cada vez. Debajo del texto, la caché: una "
                  "columna por posición y una fila por matriz (claves y valores de sus dos bloques). "
                  "Debajo, las multiplicaciones de cada token, con caché y sin ella."),
        "step": "Avanzar",
        "play": "Animar",
        "pause": "Pausa",
        "reset": "Reiniciar",
        "mode_cache": "Con caché",
        "mode_full": "Sin caché",
        "mode_label": "Modo",
        "speed": "Velocidad (tokens por segundo)",
        "advanced": "Ajustes avanzados",
        "seed": "Semilla",
        "top_p": "top-p",
        "language": "Idioma",
        "text_heading": "El texto",
        "position": "t = {t} / {n}",
        "prompt_token": "token del prompt",
        "sampled_token": "token sorteado",
        "current_token": "token actual",
        "grid_heading": "La caché",
        "grid_title": "Claves y valores guardados: una columna por posición",
        "grid_x": "posición",
        "row_k": "K, bloque {l}",
        "row_v": "V, bloque {l}",
        "cell_future": "sin calcular",
        "cell_read": "leída de la caché",
        "cell_computed": "calculada ahora",
        "cell_hover": "{row} · posición {pos} «{tok}» · {state}",
        "cell_values": "{n} números, de {lo} a {hi}",
        "grid_note": ("Cada celda es el vector real de esa posición (4 cabezas de 16 números), en color: "
                      "naranja positivo, morado negativo. Contorno grueso y ▲: calculada ahora; "
                      "sin marca: leída de la caché; rayada: sin calcular todavía."),
        "bars_heading": "Multiplicaciones por token",
        "bars_title": "Multiplicaciones de cada token",
        "bars_y": "millones de multiplicaciones",
        "bars_cached": "con caché: c(t)",
        "bars_full": "sin caché: t·c(t)",
        "bars_hover": "posición {pos}: con caché {c}; sin caché {tc} ({ratio}×)",
        "this_token": "Este token (posición {t})",
        "with_cache": "con caché",
        "without_cache": "sin caché",
        "times_more": "{x}× más",
        "totals": "Total de los {t} tokens",
        "memory": "Memoria de la caché",
        "memory_value": "{numbers} números · {kib} KiB a 8 bytes",
        "memory_formula": "2 · L · t · d = 2 · 2 · {t} · 64",
        "clock_heading": "El reloj",
        "clock_last": "Este token, medido en tu máquina",
        "clock_none": "Sin medir (se avanzó de golpe hasta aquí).",
        "clock_ratio": "El reloj: {x}× · la cuenta: {n}×",
        "clock_explain": ("La cuenta dice {n} veces y el reloj, {x}. Lo que falta es un coste que la cuenta no "
                          "ve: cada pasada lanza decenas de operaciones de NumPy y cada una paga una parte "
                          "fija, sea del tamaño que sea. Una fila sola la paga entera; {n} filas en una "
                          "pasada la reparten. Por eso un modelo lee el prompt mucho más deprisa de lo que "
                          "escribe la respuesta, fila a fila."),
        "clock_plot_title": "Tiempo medido por token",
        "clock_plot_y": "ms",
        "proof_heading": "La prueba",
        "proof_value": "Diferencia máxima entre los logits con caché y los de la pasada completa: {diff}",
        "proof_none": "Aún no hay token sorteado que comparar.",
        "proof_explain": "Son las mismas sumas en otro orden: ningún sorteo cambia por ese redondeo.",
        "error_heading": "La posición {pos} no existe",
        "error_explain": ("La tabla de posiciones P tiene {n} filas y no hay una más: avanzar falla al "
                          "buscar la fila de la posición {pos}. Es la sección sobre las posiciones, en forma "
                          "de error. Pulsa Reiniciar para empezar de nuevo."),
        "live_step": "Posición {t} de {n}: «{tok}». {mode}: {c} multiplicaciones.",
        "live_reset": "Reiniciado: «La Nela», posición {t} de {n}.",
        "live_mode": "Modo: {mode}.",
        "live_error": "Error en la posición {pos}: {type}: {message}",
        "live_play": "Animación en marcha.",
        "live_pause": "Animación en pausa.",
        "keyboard": ("Teclado: → o N avanza, Espacio anima o pausa, C cambia con/sin caché, "
                     "R reinicia."),
        "table_heading": "Los datos en una tabla",
        "table_pos": "posición",
        "table_token": "token",
        "table_cached": "con caché",
        "table_full": "sin caché",
        "table_ms_cached": "ms con caché",
        "table_ms_full": "ms sin caché",
        "notice_bad": "Parámetro de la URL ignorado: {key}={value} ({why}).",
        "why_choice": "valores posibles: {options}",
        "why_int": "se esperaba un número entero",
        "why_range": "fuera de {lo}..{hi}",
        "why_float": "se esperaba un número",
        "why_bool": "se esperaba 1 o 0",
        "why_unknown": "parámetro desconocido",
        "model_error": "No se pudo cargar el modelo: {message}",
    },
    "en": {
        "title": "The key-value cache: what each token costs",
        "intro": ("The mini-GPT writes after “La Nela”, one token at a time. Below the text, the cache: one "
                  "column per position and one row per matrix (keys and values of its two blocks). "
                  "Below that, the multiplications of each token, with the cache and without it."),
        "step": "Step",
        "play": "Animate",
        "pause": "Pause",
        "reset": "Reset",
        "mode_cache": "With cache",
        "mode_full": "No cache",
        "mode_label": "Mode",
        "speed": "Speed (tokens per second)",
        "advanced": "Advanced settings",
        "seed": "Seed",
        "top_p": "top-p",
        "language": "Language",
        "text_heading": "The text",
        "position": "t = {t} / {n}",
        "prompt_token": "prompt token",
        "sampled_token": "sampled token",
        "current_token": "current token",
        "grid_heading": "The cache",
        "grid_title": "Stored keys and values: one column per position",
        "grid_x": "position",
        "row_k": "K, block {l}",
        "row_v": "V, block {l}",
        "cell_future": "not yet computed",
        "cell_read": "read from the cache",
        "cell_computed": "computed now",
        "cell_hover": "{row} · position {pos} “{tok}” · {state}",
        "cell_values": "{n} numbers, from {lo} to {hi}",
        "grid_note": ("Each cell is the real vector of that position (4 heads of 16 numbers), in colour: "
                      "orange positive, purple negative. Thick outline and ▲: computed now; "
                      "no mark: read from the cache; hatched: not computed yet."),
        "bars_heading": "Multiplications per token",
        "bars_title": "Multiplications of each token",
        "bars_y": "millions of multiplications",
        "bars_cached": "with cache: c(t)",
        "bars_full": "no cache: t·c(t)",
        "bars_hover": "position {pos}: with cache {c}; no cache {tc} ({ratio}×)",
        "this_token": "This token (position {t})",
        "with_cache": "with cache",
        "without_cache": "no cache",
        "times_more": "{x}× more",
        "totals": "Total of the {t} tokens",
        "memory": "Cache memory",
        "memory_value": "{numbers} numbers · {kib} KiB at 8 bytes",
        "memory_formula": "2 · L · t · d = 2 · 2 · {t} · 64",
        "clock_heading": "The clock",
        "clock_last": "This token, measured on your machine",
        "clock_none": "Not measured (skipped straight here).",
        "clock_ratio": "The clock: {x}× · the count: {n}×",
        "clock_explain": ("The count says {n} times and the clock {x}. What is missing is a cost the count "
                          "does not see: each pass launches dozens of NumPy operations and each pays a fixed "
                          "part, whatever its size. One row alone pays it all; {n} rows in one pass share "
                          "it. That is why a model reads the prompt much faster than it writes the answer, "
                          "row by row."),
        "clock_plot_title": "Measured time per token",
        "clock_plot_y": "ms",
        "proof_heading": "The proof",
        "proof_value": "Largest difference between the cached logits and the full pass: {diff}",
        "proof_none": "No sampled token to compare yet.",
        "proof_explain": "The same sums in another order: no draw changes because of that rounding.",
        "error_heading": "Position {pos} does not exist",
        "error_explain": ("The position table P has {n} rows and there is no other: avanzar fails looking up "
                          "the row of position {pos}. It is the section on positions, as an error. "
                          "Press Reset to start again."),
        "live_step": "Position {t} of {n}: “{tok}”. {mode}: {c} multiplications.",
        "live_reset": "Reset: “La Nela”, position {t} of {n}.",
        "live_mode": "Mode: {mode}.",
        "live_error": "Error at position {pos}: {type}: {message}",
        "live_play": "Animation playing.",
        "live_pause": "Animation paused.",
        "keyboard": "Keyboard: → or N steps, Space plays or pauses, C toggles the cache, R resets.",
        "table_heading": "The data as a table",
        "table_pos": "position",
        "table_token": "token",
        "table_cached": "with cache",
        "table_full": "no cache",
        "table_ms_cached": "ms with cache",
        "table_ms_full": "ms no cache",
        "notice_bad": "URL parameter ignored: {key}={value} ({why}).",
        "why_choice": "possible values: {options}",
        "why_int": "a whole number was expected",
        "why_range": "outside {lo}..{hi}",
        "why_float": "a number was expected",
        "why_bool": "1 or 0 was expected",
        "why_unknown": "unknown parameter",
        "model_error": "The model could not be loaded: {message}",
    },
}


def tr(lang: str, msg_id: str, **values) -> str:
    table = STRINGS.get(lang, STRINGS[DEFAULT_LANG])
    return table[msg_id].format(**values) if values else table[msg_id]


def num(x, lang: str, digits: int = 0) -> str:
    """12345.6 -> '12 346' (es, narrow spaces) or '12,346' (en); digits after the point."""
    s = f"{x:,.{digits}f}"
    return s.replace(",", NARROW_NBSP) if lang == "es" else s


def sci(x: float) -> str:
    """4.44e-15 -> '4.4e-15', 0 -> '0'."""
    return "0" if x == 0 else f"{x:.1e}".replace("e-0", "e-").replace("e+0", "e+")
