"""A key given to --api-key-env in place of the name of its variable is never repeated: not by
the option's check, nor by the served adapter when no variable of that name is set; a name
that is not set is still named."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from chronoprobe.cli.main import app
from chronoprobe.models.served import ServedLM
from chronoprobe.probes.cloze_views import PllParams

KEY = "sk-secret-123"


def test_the_option_refuses_a_key_without_quoting_it(tmp_path, one_row_set):
    args = ["probe", "generate", str(one_row_set), "-m", "openai:gpt-x"]
    result = CliRunner().invoke(app, [*args, "--api-key-env", KEY, "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert " ".join(result.output.split()) == (
        "error: --api-key-env: takes the name of an environment variable holding the key "
        "(e.g. OPENAI_API_KEY), not the key itself; the value given is not repeated here"
    )
    assert not (tmp_path / "o").exists()
    assert PllParams(api_key_env="MY_KEY_2").api_key_env == "MY_KEY_2"


@pytest.mark.parametrize("key", [KEY, "hf_AbCdEf0123456789"])
def test_the_adapter_never_quotes_a_key_given_as_the_name(key, monkeypatch):
    monkeypatch.delenv(key, raising=False)
    with pytest.raises(ValueError) as refused:
        ServedLM("openai:tiny", base_url="http://127.0.0.1:9/v1", api_key_env=key)
    assert key not in str(refused.value)
    assert "it takes the variable's name (e.g. OPENAI_API_KEY), not the key" in str(refused.value)


def test_a_variable_that_is_not_set_is_named(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(ValueError, match=r"--api-key-env names \$NO_SUCH_KEY, which is not set"):
        ServedLM("openai:tiny", base_url="http://127.0.0.1:9/v1", api_key_env="NO_SUCH_KEY")
