"""The language of a prompt's prose, and the value names read in it."""

import pytest

from prefixlint.context import RuleContext
from prefixlint.prose_language import prose_language
from prefixlint.sources import source_module

DE = (
    "Du bist der Assistent von Beispiel. Du hilfst bei Fragen zu der Bestellung und der"
    " Lieferung. Antworte immer auf Deutsch und nicht zu lang. Bitte sei freundlich.\n"
)
FR = (
    "Vous êtes l'assistant de la bibliothèque. Vous aidez les usagers à trouver des livres et"
    " à prolonger les prêts. Ne donnez pas les informations d'un autre usager.\n"
)
ES = (
    "Eres el asistente de reservas del restaurante. Ayudas a reservar mesa y a cambiar las"
    " reservas que los clientes hacen para la cena con su familia.\n"
)
IT = (
    "Sei l'assistente dell'agriturismo. Rispondi in italiano, con cortesia, e non confermare"
    " le prenotazioni: invita l'ospite a usare il modulo della pagina per la richiesta.\n"
)
EN = (
    "You are the assistant of the library. You help members find books and renew loans; do"
    " not share the data of another member with anyone.\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [(DE, "de"), (FR, "fr"), (ES, "es"), (IT, "it"), (EN, None), ("Hallo und die.", None)],
)
def test_prose_language(text, expected):
    assert prose_language(text) == expected


def findings(path, text):
    ctx = RuleContext(path, frozenset({"PFX101", "PFX103"}), options={})
    return sorted((d.code, d.span.line) for d in source_module(path, text).check(text, ctx))


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("p.txt", "Heute ist der {datum}.\n" + DE, [("PFX101", 1)]),
        ("p.j2", "Bonjour {{ prenom }}.\n" + FR, [("PFX103", 1)]),
        ("p.j2", "Vous parlez avec {{ utilisateur.email }}.\n" + FR, [("PFX103", 1)]),
        ("p.md", "Fecha y hora: {{fecha_hora}}\n\n" + ES, [("PFX101", 1)]),
        ("p.txt", "Oggi è {data_odierna}.\n" + IT, [("PFX101", 1)]),
        # English prose: the same words are English names (a data point) or nothing
        ("p.j2", "Point: {{ datum }}\n" + EN, []),
        ("p.j2", "Hora: {{ hora }}\n" + EN, []),
    ],
)
def test_names_in_the_language_of_the_prose(path, text, expected):
    assert findings(path, text) == expected
