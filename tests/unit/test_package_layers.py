"""The import rule of dbt/adapters/paimon/ (docs/development.md): a module imports its own
package or a lower layer, never an upper one; the layers below the dbt-facing ones import no
dbt (as Paimon's merge code knows no engine)."""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "dbt" / "adapters" / "paimon"
PREFIX = "dbt.adapters.paimon"
# lowest first; the modules at the package's top (impl, connections, ...) are the dbt glue
LAYERS = {
    "runtime": 0,
    "format": 1, "config": 1,
    "catalog": 2,
    "datasource": 3,
    "write": 4,
    "ops": 5, "server": 5,
    "materialize": 6, "environments": 6,
}
GLUE = 7
# modules anyone may import: they import nothing of the package
LEAVES = {"__version__": -1}
# packages that know nothing of dbt (dbt-core, dbt-adapters, dbt_common)
DBT_FREE = ("runtime", "format", "config", "catalog", "datasource", "write", "ops", "server")


def layer_of(module: str) -> tuple:
    """(package, rank) of a dotted module under dbt.adapters.paimon."""
    parts = module[len(PREFIX) + 1:].split(".") if module != PREFIX else [""]
    if parts[0] in LAYERS:
        return parts[0], LAYERS[parts[0]]
    if parts[0] in LEAVES:
        return parts[0], LEAVES[parts[0]]
    return "", GLUE


def imports_of(path: pathlib.Path):
    module = PREFIX + "." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    module = module.removesuffix(".__init__")
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            names = [f"{target}.{alias.name}" for alias in node.names]
            yield module, target, names, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield module, alias.name, [alias.name], node.lineno


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_package_of_the_tree_has_a_layer():
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == set(LAYERS)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_an_upper_layer(path):
    wrong = []
    for module, target, names, line in imports_of(path):
        if not target.startswith(PREFIX):
            continue
        own_package, own_rank = layer_of(module)
        for name in names:  # `from dbt.adapters.paimon import environments` imports a package
            package, rank = layer_of(name if target == PREFIX else target)
            if package != own_package and rank >= own_rank and not (
                    own_rank == GLUE and rank == GLUE):
                wrong.append(f"line {line}: {module} imports {name} (layer {package or 'glue'})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("path", [p for p in MODULES
                                  if p.relative_to(PACKAGE).parts[0] in DBT_FREE],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_lower_layers_import_no_dbt(path):
    wrong = [f"line {line}: imports {target}" for _, target, _, line in imports_of(path)
             if (target.startswith("dbt.") and not target.startswith(PREFIX))
             or target.startswith("dbt_common")]
    assert not wrong, "\n".join(wrong)
