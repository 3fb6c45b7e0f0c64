"""Tests for .ci/layers on small synthetic crates in temporary directories.

Run: python3 -m unittest discover -s .ci -p 'test_*.py'
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers")

# A small layer table in the form docs/architecture.md uses.
ARCHITECTURE = """\
# Architecture

| module | holds | depends on |
|---|---|---|
| `base/` | the bottom. | nothing of ours |
| `ring/` | rings. | `base` |
| `store/` | storage, which mentions `client::Thing` in prose. | `ring` |
| `service/` | rules. | `store` |
| `client/` | the client. | `ring` |
| `bin/ringd` | start-up. | `service` |

## Elsewhere

| module | depends on |
|---|---|
| `ignored` | `ignored` |
"""

CLEAN = {
    "lib.rs": "pub mod base;\npub mod ring;\npub mod store;\npub mod service;\npub mod client;\n",
    "base.rs": "pub struct Base;\n",
    "ring/mod.rs": """\
        //! Uses `crate::store` only in a doc comment: [`crate::store::Store`].
        mod name;
        mod snapshot;
        pub use self::name::Name;
        pub use self::snapshot::Snapshot;
        use crate::base::Base;
        """,
    "ring/name.rs": """\
        use super::Snapshot; // the parent's re-export: not a sibling edge
        /* crate::store::Store, crate::ring::snapshot::Snapshot
           /* nested */ crate::service::Rules */
        pub struct Name;
        const S: &str = "crate::store::Store and super::snapshot::X";
        const R: &str = r#"crate::service::Rules "quoted" "#;
        const C: char = '"';
        fn f<'a>(x: &'a str) -> &'a str { x }
        """,
    "ring/snapshot.rs": """\
        use crate::ring::name::Name;
        pub struct Snapshot(Name);
        #[cfg(test)]
        mod tests {
            use super::*; // the file itself
        }
        """,
    "store.rs": """\
        use crate::{
            base::Base,
            ring::{self, Snapshot},
        };
        pub struct Store;
        """,
    "service.rs": """\
        use crate::store::Store;
        // Reaching past store to base is allowed: store may use it.
        fn f() -> crate::base::Base { crate::base::Base }
        """,
    "client.rs": "use crate::ring::Name;\n",
    "bin/ringd.rs": "use ringd::service;\nuse crate::anything;\n",
}


class LayersTest(unittest.TestCase):
    def run_layers(self, files, architecture=ARCHITECTURE):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "docs"))
            with open(os.path.join(root, "docs", "architecture.md"), "w") as f:
                f.write(architecture)
            for rel, text in files.items():
                path = os.path.join(root, "src", rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(textwrap.dedent(text))
            done = subprocess.run(
                [sys.executable, SCRIPT, root], capture_output=True, text=True, timeout=60
            )
        return done.returncode, done.stdout

    def test_a_clean_tree_passes(self):
        code, out = self.run_layers(CLEAN)
        self.assertEqual(code, 0, out)
        self.assertIn("every dependency follows the layer table", out)

    def test_an_up_edge_in_a_use_fails_naming_file_line_and_edge(self):
        files = dict(CLEAN)
        files["ring/name.rs"] = "pub struct Name;\n\nuse crate::store::Store;\n"
        code, out = self.run_layers(files)
        self.assertEqual(code, 1)
        self.assertEqual(
            out.splitlines(),
            [
                "src/ring/name.rs:3: `crate::store::Store`: ring -> store points up the layers "
                "(ring may use: base)"
            ],
        )

    def test_every_up_edge_is_reported_from_groups_code_and_aliases(self):
        files = dict(CLEAN)
        files["base.rs"] = """\
            use crate::{
                ring::Name,
                store::{
                    self,
                    Store,
                },
            };
            fn f() { crate::service::run(); store::open(); }
            """
        files["client.rs"] = "fn f() -> crate::store::Store { todo!() }\n"
        code, out = self.run_layers(files)
        self.assertEqual(code, 1)
        self.assertEqual(
            out.splitlines(),
            [
                "src/base.rs:2: `crate::ring::Name`: base -> ring points up the layers (base may use: nothing of ours)",
                "src/base.rs:4: `crate::store`: base -> store points up the layers (base may use: nothing of ours)",
                "src/base.rs:5: `crate::store::Store`: base -> store points up the layers (base may use: nothing of ours)",
                "src/base.rs:8: `crate::service::run`: base -> service points up the layers (base may use: nothing of ours)",
                "src/base.rs:8: `store::open`: base -> store points up the layers (base may use: nothing of ours)",
                "src/client.rs:1: `crate::store::Store`: client -> store points up the layers (client may use: base, ring)",
            ],
        )

    def test_a_sibling_cycle_fails_naming_its_files(self):
        files = dict(CLEAN)
        files["ring/name.rs"] = "use super::snapshot::Snapshot;\npub struct Name;\n"
        code, out = self.run_layers(files)
        self.assertEqual(code, 1)
        self.assertEqual(
            out.splitlines(),
            [
                "a cycle between the files of src/ring: src/ring/name.rs, src/ring/snapshot.rs",
                "  name -> snapshot: src/ring/name.rs:1: `super::snapshot::Snapshot`",
                "  snapshot -> name: src/ring/snapshot.rs:1: `crate::ring::name::Name`",
            ],
        )

    def test_a_path_in_a_serde_attribute_string_is_a_use(self):
        # The derive turns `from = "…"` into code naming the type, so a
        # file that names its sibling only there still depends on it.
        files = dict(CLEAN)
        files["ring/name.rs"] = """\
            #[derive(serde::Deserialize)]
            #[serde(
                rename_all = "snake_case",
                from = "super::snapshot::Raw"
            )]
            pub struct Name;
            """
        files["ring/snapshot.rs"] = "use super::name::Name;\npub struct Raw;\npub struct Snapshot(Name);\n"
        code, out = self.run_layers(files)
        self.assertEqual(code, 1)
        self.assertEqual(
            out.splitlines(),
            [
                "a cycle between the files of src/ring: src/ring/name.rs, src/ring/snapshot.rs",
                "  name -> snapshot: src/ring/name.rs:4: `super::snapshot::Raw`",
                "  snapshot -> name: src/ring/snapshot.rs:1: `super::name::Name`",
            ],
        )

    def test_every_serde_key_that_takes_a_path_is_read_and_names_are_not(self):
        files = dict(CLEAN)
        files["base.rs"] = """\
            use crate::store as st;
            #[derive(serde::Serialize, serde::Deserialize)]
            #[serde(try_from = "crate::ring::Name", into = "self::super::ring::Name")]
            #[serde(bound(deserialize = "T: crate::service::Rule"))]
            pub struct Base<T> {
                #[serde(with = "st::codec", default = "crate::service::zero")]
                #[cfg_attr(test, serde(skip_serializing_if = "crate::client::empty"))]
                #[serde(serialize_with = "crate::store::out", deserialize_with = "time::serde::rfc3339")]
                #[serde(rename = "crate::store::Named", alias = "super::store::Named")]
                field: T,
            }
            const S: &str = "crate::store::NotAttribute";
            """
        code, out = self.run_layers(files)
        self.assertEqual(code, 1)
        nothing = "(base may use: nothing of ours)"
        self.assertEqual(
            out.splitlines(),
            [
                f"src/base.rs:1: `crate::store`: base -> store points up the layers {nothing}",
                f"src/base.rs:3: `crate::ring::Name`: base -> ring points up the layers {nothing}",
                f"src/base.rs:3: `self::super::ring::Name`: base -> ring points up the layers {nothing}",
                f"src/base.rs:4: `crate::service::Rule`: base -> service points up the layers {nothing}",
                f"src/base.rs:6: `st::codec`: base -> store points up the layers {nothing}",
                f"src/base.rs:6: `crate::service::zero`: base -> service points up the layers {nothing}",
                f"src/base.rs:7: `crate::client::empty`: base -> client points up the layers {nothing}",
                f"src/base.rs:8: `crate::store::out`: base -> store points up the layers {nothing}",
            ],
        )

    def test_a_longer_loop_through_a_subdirectory_is_one_cycle(self):
        files = {k: v for k, v in CLEAN.items() if k != "client.rs"}
        files["client/mod.rs"] = "mod ack;\nmod builder;\nmod watch;\n"
        files["client/builder.rs"] = "pub struct Builder;\nfn f() { super::watch::start(); }\n"
        files["client/watch/mod.rs"] = "mod stream;\n"
        files["client/watch/stream.rs"] = "use super::super::ack::{\n    Acker,\n};\n"
        files["client/ack.rs"] = "pub struct Acker(self::super::builder::Builder);\n"
        code, out = self.run_layers(files)
        self.assertEqual(code, 1)
        self.assertEqual(
            out.splitlines(),
            [
                "a cycle between the files of src/client: src/client/ack.rs, src/client/builder.rs, src/client/watch/",
                "  ack -> builder: src/client/ack.rs:1: `self::super::builder::Builder`",
                "  builder -> watch: src/client/builder.rs:2: `super::watch::start`",
                "  watch -> ack: src/client/watch/stream.rs:2: `super::super::ack::Acker`",
            ],
        )

    def test_super_in_an_inline_module_starts_from_that_module(self):
        files = dict(CLEAN)
        # From `ring::name::tests`, `super::super` is `ring`: no sibling edge.
        files["ring/name.rs"] = "pub struct Name;\nmod tests {\n    use super::super::Snapshot;\n}\n"
        code, out = self.run_layers(files)
        self.assertEqual(code, 0, out)
        # From `ring::name` itself it would be the crate root's `snapshot`.
        files["ring/name.rs"] = "mod tests {\n    use super::super::snapshot::S;\n}\n"
        code, out = self.run_layers(files)
        self.assertEqual(code, 1)
        self.assertIn("snapshot -> name", out)

    def test_a_module_without_a_row_fails(self):
        files = dict(CLEAN)
        files["extra.rs"] = "pub struct Extra;\n"
        code, out = self.run_layers(files)
        self.assertEqual(code, 1)
        self.assertEqual(
            out.splitlines(),
            ["src/extra: a module with no row in the table of docs/architecture.md"],
        )

    def test_a_document_without_the_table_is_refused(self):
        code, out = self.run_layers(CLEAN, architecture="# Architecture\n\nNo table.\n")
        self.assertEqual(code, 2)


if __name__ == "__main__":
    unittest.main()
