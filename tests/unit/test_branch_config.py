"""Which branch each table is read and written on (branch_config.py): a node's paimon_branch
config, else --vars paimon_branch, else the profile's branch; bad names refused before anything
runs, naming the node and the option."""
from types import SimpleNamespace

import pytest
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.paimon.branch_config import default_branch, table_branches
from dbt.adapters.paimon.credentials import PaimonCredentials


def node(name, branch=None, kind="model", schema="Analytics", alias=None, **config):
    if branch is not None:
        config["paimon_branch"] = branch
    return SimpleNamespace(resource_type=kind, name=name, schema=schema, alias=alias or name,
                           original_file_path=f"models/{name}.sql", config=config)


def runtime(cli_vars=None, **profile):
    return SimpleNamespace(cli_vars=cli_vars or {},
                           credentials=PaimonCredentials.from_dict({"schema": "s", **profile}))


def test_vars_win_over_the_profile_and_main_names_main():
    assert default_branch(runtime()) is None
    assert default_branch(runtime(branch="nightly")) == "nightly"
    assert default_branch(runtime({"paimon_branch": "audit"}, branch="nightly")) == "audit"
    assert default_branch(runtime({"paimon_branch": "main"}, branch="nightly")) is None
    assert runtime(branch="main").credentials.branch is None
    assert "branch" in runtime(branch="x").credentials._connection_keys()  # dbt debug


def test_bad_branch_names_in_vars_and_profile():
    with pytest.raises(DbtRuntimeError, match=r"--vars paimon_branch: branch name 'a/b' must "
                                              r"not contain '/'"):
        default_branch(runtime({"paimon_branch": "a/b"}))
    with pytest.raises(DbtRuntimeError, match="Profile field branch: .*pure numeric"):
        runtime(branch="123")


def test_node_configs_place_their_tables():
    nodes = [node("staged", "stage"), node("kept", "main"), node("plain"),
             node("codes", "stage", kind="seed"), node("hist", "stage", kind="snapshot"),
             node("wide_a", "wide", target="other.wide"), node("wide_b", "wide", target="wide"),
             node("a_test", "stage", kind="test")]
    assert table_branches(nodes) == {
        ("analytics", "staged"): "stage", ("analytics", "kept"): None,
        ("analytics", "codes"): "stage", ("analytics", "hist"): "stage",
        ("other", "wide"): "wide", ("analytics", "wide"): "wide"}


def test_bad_node_configs_name_the_node_and_the_option():
    with pytest.raises(CompilationError) as caught:
        table_branches([node("staged", "a b"), node("ok", "fine"), node("num", "42"),
                        node("w1", "x", target="wide"), node("w2", "y", target="wide")])
    message = str(caught.value)
    assert "model 'staged' (models/staged.sql): config paimon_branch 'a b'" in message
    assert "must not contain '/', '$' or spaces" in message
    assert "model 'num' (models/num.sql): config paimon_branch '42'" in message
    assert "model 'w2' (models/w2.sql) writes analytics.wide on branch 'y', and model 'w1' " \
           "(models/w1.sql) on branch 'x'" in message
    assert "'ok'" not in message
