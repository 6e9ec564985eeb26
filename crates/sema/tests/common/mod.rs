//! The harness the pointer and array snapshots share: a script checked
//! against a fixture kernel, printed as its diagnostics or as its maps,
//! variables' types, the scale of each scaled node and every read through
//! memory.

use ktypes::FixtureKernel;
use sema::{CheckOptions, check, print_types};
use source::{SourceMap, render_all};

fn run_on(src: &str, kernel: &FixtureKernel) -> String {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, mut diags) = syntax::parse(map.file(id));
    let (typed, sema_diags) = check(&program, kernel, &CheckOptions::default());
    diags.extend(sema_diags.iter().cloned());
    if diags.has_errors() {
        return render_all(diags.iter(), &map);
    }
    let mut out = print_types(&typed);
    for p in &typed.probes {
        out.push_str(&format!("{}\n", p.resolved.name));
        let mut scales: Vec<_> = p.scales.iter().collect();
        scales.sort_by_key(|(id, _)| id.0);
        for (id, n) in scales {
            out.push_str(&format!("  node {}: scaled by {n}\n", id.0));
        }
        let mut members: Vec<_> = p.members.iter().collect();
        members.sort_by_key(|(id, _)| id.0);
        for (id, m) in members {
            out.push_str(&format!("  node {}: {m:?}\n", id.0));
        }
    }
    out
}

pub fn run(src: &str) -> String {
    run_on(src, &FixtureKernel::typical())
}

macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), $crate::common::run($src), $src);
        }
    };
}
