"""The byte-editing layer every fix goes through: untouched bytes must stay identical."""

from __future__ import annotations

import pytest

from transcript_doctor.editing import EditError, JsonText, Lines, splice, strip_string_token
from transcript_doctor.source import sniff

PRETTY = b"""{
  "history": [
    {
      "role": "user",
      "parts": [
        {
          "text": "hi"
        }
      ]
    },
    {
      "role": "model",
      "parts": []
    },
    {
      "role": "user",
      "parts": [
        {
          "text": "again"
        }
      ]
    }
  ],
  "authType": "gemini-api-key"
}"""


def edited(text: JsonText) -> bytes:
    return splice(text.data, text.splices())


def test_remove_middle_element_of_pretty_array() -> None:
    text = JsonText(PRETTY)
    text.remove("/history/1")
    assert edited(text) == PRETTY.replace(b'    {\n      "role": "model",\n      "parts": []\n    },\n', b"")


def test_remove_first_and_last_elements() -> None:
    text = JsonText(PRETTY)
    text.remove("/history/0")
    text.remove("/history/2")
    assert (
        edited(text)
        == b'{\n  "history": [\n    {\n      "role": "model",\n      "parts": []\n    }\n  ],\n  "authType": "gemini-api-key"\n}'
    )


def test_remove_everything_gives_an_empty_array() -> None:
    text = JsonText(PRETTY)
    for index in range(3):
        text.remove(f"/history/{index}")
    assert edited(text) == b'{\n  "history": [],\n  "authType": "gemini-api-key"\n}'


def test_insert_into_pretty_array_uses_the_document_indentation() -> None:
    text = JsonText(PRETTY)
    text.insert(
        "/history/1/parts", 0, {"functionResponse": {"id": "c1", "name": "f", "response": {"error": "x"}}}
    )
    out = edited(text)
    assert out == PRETTY.replace(
        b'"parts": []',
        b'"parts": [\n        {\n          "functionResponse": {\n            "id": "c1",\n            "name": "f",\n'
        b'            "response": {\n              "error": "x"\n            }\n          }\n        }\n      ]',
    )


def test_insert_between_elements_keeps_neighbours_byte_identical() -> None:
    text = JsonText(PRETTY)
    text.insert("/history", 2, {"role": "model", "parts": [{"text": "ok"}]})
    out = edited(text)
    assert out.count(b'"text": "ok"') == 1
    assert out.startswith(
        PRETTY[
            : PRETTY.index(
                b'    {\n      "role": "user",\n      "parts": [\n        {\n          "text": "again"'
            )
        ]
    )
    assert (
        b'      "parts": []\n    },\n    {\n      "role": "model",\n      "parts": [\n        {\n          "text": "ok"\n        }\n      ]\n    },\n    {\n      "role": "user"'
        in out
    )


def test_one_line_elements_in_an_indented_array_stay_one_line() -> None:
    data = b'[\n  {"role": "user", "content": "a"},\n  {"role": "assistant", "content": "b"}\n]\n'
    text = JsonText(data)
    text.insert("", 2, {"role": "tool", "tool_call_id": "c", "content": "x"})
    assert edited(text) == (
        b'[\n  {"role": "user", "content": "a"},\n  {"role": "assistant", "content": "b"},\n'
        b'  {"role": "tool", "tool_call_id": "c", "content": "x"}\n]\n'
    )


def test_compact_line_edits() -> None:
    data = b'{"a":[1,2,3],"b":{"c":"d"}}'
    text = JsonText(data)
    text.remove("/a/1")
    text.set_member("/b", "thoughtSignature", "skip")
    assert edited(text) == b'{"a":[1,3],"b":{"c":"d","thoughtSignature":"skip"}}'


def test_member_set_in_pretty_object() -> None:
    data = b'{\n  "functionCall": {\n    "name": "f"\n  }\n}'
    text = JsonText(data)
    text.set_member("", "thoughtSignature", "skip_thought_signature_validator")
    assert (
        edited(text)
        == b'{\n  "functionCall": {\n    "name": "f"\n  },\n  "thoughtSignature": "skip_thought_signature_validator"\n}'
    )


def test_move_raw_bytes_between_arrays() -> None:
    data = b'[[1,{"x":2}],[3]]'
    text = JsonText(data)
    moved = text.raw("/0/1")
    text.remove("/0/1")
    text.insert("/1", 0, raw=moved)
    assert edited(text) == b'[[1],[{"x":2},3]]'


def test_edits_inside_a_removed_value_are_dropped() -> None:
    text = JsonText(b'[{"t":"a "},{"t":"b"}]')
    text.strip_string("/0/t")
    text.remove("/0")
    assert edited(text) == b'[{"t":"b"}]'


def test_number_spelling_and_escapes_survive() -> None:
    data = b'[{"n":1.0e+2,"big":18446744073709551617,"s":"\\u00e9\\/"},{"drop":true}]'
    text = JsonText(data)
    text.remove("/1")
    assert edited(text) == b'[{"n":1.0e+2,"big":18446744073709551617,"s":"\\u00e9\\/"}]'


@pytest.mark.parametrize(
    ("token", "stripped"),
    [
        (b'"done. "', b'"done."'),
        (b'"done\\n\\n"', b'"done"'),
        (b'"a\\\\n"', b'"a\\\\n"'),  # an escaped backslash followed by n: not whitespace
        (b'"x\\u00a0\\t "', b'"x"'),
        (b'"\\u00e9 "', b'"\\u00e9"'),
        (b'"caf\xc3\xa9 \xe2\x80\xa8"', b'"caf\xc3\xa9"'),
    ],
)
def test_strip_string_token(token: bytes, stripped: bytes) -> None:
    assert strip_string_token(token) == stripped


def test_missing_pointer_is_an_edit_error() -> None:
    with pytest.raises(EditError):
        JsonText(b"[1]").remove("/5")


def _lines(data: bytes) -> Lines:
    return Lines(sniff("x.jsonl", data))


def test_an_object_holding_a_key_twice_is_not_edited() -> None:
    """Its earlier member is in no span (lookups give the last, as JSON.parse does), so
    rebuilding its layout would copy bytes no report names: the edit is refused."""
    data = b'{"calls": [{"id": "c1", "status": "ok", "status": "ok", "args": {}}]}'
    text = JsonText(data)
    assert data[text.span("/calls/0/status").start :].startswith(b'"ok", "args"')
    for edit in (lambda: text.set_member("/calls/0", "result", []), lambda: text.remove("/calls/0/args")):
        with pytest.raises(EditError, match="holds a key twice"):
            edit()
    text.insert("/calls", 1, {"id": "c2"})  # the array around it is edited as usual
    assert splice(data, text.splices()).endswith(b'"args": {}}, {"id": "c2"}]}')


def test_jsonl_remove_and_insert_keep_other_lines() -> None:
    data = b'{"a":1}\n{"b":2}\n{"c":3}\n'
    lines = _lines(data)
    lines.remove(1)
    lines.insert_after(1, {"n": "new"})
    lines.insert_after(2, {"z": 9})
    assert splice(data, lines.splices()) == b'{"a":1}\n{"n":"new"}\n{"c":3}\n{"z":9}\n'


def test_jsonl_insert_follows_python_style_and_crlf() -> None:
    data = b'{"role": "user", "content": "caf\\u00e9"}\r\n{"role": "assistant", "content": "x"}\r\n'
    lines = _lines(data)
    lines.insert_after(0, {"role": "tool", "content": "\u00e9"})
    assert splice(data, lines.splices()) == (
        b'{"role": "user", "content": "caf\\u00e9"}\r\n{"role": "tool", "content": "\\u00e9"}\r\n'
        b'{"role": "assistant", "content": "x"}\r\n'
    )


def test_jsonl_without_final_newline_stays_without() -> None:
    data = b'{"a":1}\n{"b":2}'
    lines = _lines(data)
    lines.insert_after(1, {"c": 3})
    assert splice(data, lines.splices()) == b'{"a":1}\n{"b":2}\n{"c":3}'
    lines = _lines(data)
    lines.remove(1)
    assert splice(data, lines.splices()) == b'{"a":1}\n'


def test_jsonl_patch_inside_a_line() -> None:
    data = b'{"uuid":"u2","parentUuid":"u1","message":{"content":"x "}}\n'
    lines = _lines(data)
    lines.text(0).replace("/parentUuid", "u0")
    lines.text(0).strip_string("/message/content")
    assert splice(data, lines.splices()) == b'{"uuid":"u2","parentUuid":"u0","message":{"content":"x"}}\n'


def test_jsonl_replace_through_spans_lines_and_the_bytes_between() -> None:
    """A replacement of lines 2 to 4 (a blank line among them) takes their bytes, the breaks
    between them included, and keeps the break after the last; the log holds all of it."""
    data = b'{"a":1}\n{"b":"x\n\ny"}\n{"c":3}\n'
    lines = _lines(data)
    assert [line.number for line in lines.lines] == [1, 2, 4, 5]
    lines.replace(1, b'{"b":"x\\n\\ny"}', through=2)
    assert splice(data, lines.splices()) == b'{"a":1}\n{"b":"x\\n\\ny"}\n{"c":3}\n'
    (logged,) = lines.log
    assert (logged.pointer, logged.old) == ("lines 2-4", b'{"b":"x\n\ny"}')


@pytest.mark.parametrize(
    "text",
    [
        b'{"a":"x","b":"2{"c":{"d":1}}',  # a torn stub glued to the next record
        b'{"a":1}}',
        b'{"a":1} {"b":2}',
        b'{"a":[1,2}',
        b'{"a":{"b":1}',
    ],
)
def test_text_that_is_not_one_json_value_is_not_edited(text: bytes) -> None:
    # A JSONL line that does not parse used to be indexed anyway: a stray closer crashed
    # the SARIF preview of a repair on a glued Pi line, and a second value replaced the root.
    with pytest.raises(ValueError):
        JsonText(text)


def test_nothing_is_edited_inside_a_torn_line() -> None:
    # The glued line's own bytes are no JSON value (only the record after the stub is):
    # an edit inside it would be placed by guesswork.
    source = sniff("a.jsonl", b'{"a":1}\n{"id":"x","t":"2{"id":"y","p":"x"}\n')
    assert [source.record(line) for line in source.lines] == [{"a": 1}, {"id": "y", "p": "x"}]
    lines = Lines(source)
    lines.text(0).replace("/a", 2)
    with pytest.raises(EditError, match="line 2 does not parse"):
        lines.text(1)
