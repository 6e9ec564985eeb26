//! Kernel facts that cost time and memory (vmlinux BTF: megabytes; the
//! tracing-feature probe: loads a test program) are asked for only by the
//! scripts that need them.

use std::cell::Cell;

use ktypes::{
    Btf, FixtureKernel, KernelFunction, KernelInfo, KernelInfoError, TracepointFormat,
    TracingFeatures,
};
use sema::{CheckOptions, check};
use source::SourceMap;

/// A fixture kernel that counts the expensive questions.
struct Counting {
    inner: FixtureKernel,
    btf: Cell<u32>,
    features: Cell<u32>,
}

impl KernelInfo for Counting {
    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<TracepointFormat, KernelInfoError> {
        self.inner.tracepoint_format(category, name)
    }
    fn tracepoints(&self) -> Result<Vec<(String, String)>, KernelInfoError> {
        self.inner.tracepoints()
    }
    fn btf(&self) -> Result<&Btf, KernelInfoError> {
        self.btf.set(self.btf.get() + 1);
        self.inner.btf()
    }
    fn tracing_features(&self) -> Option<TracingFeatures> {
        self.features.set(self.features.get() + 1);
        self.inner.tracing_features()
    }
    fn kernel_functions(&self) -> Result<Vec<KernelFunction>, KernelInfoError> {
        self.inner.kernel_functions()
    }
}

fn questions(src: &str) -> (u32, u32) {
    let k = Counting {
        inner: FixtureKernel::typical(),
        btf: Cell::new(0),
        features: Cell::new(0),
    };
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, diags) = syntax::parse(map.file(id));
    assert!(!diags.has_errors());
    let (_, diags) = check(&program, &k, &CheckOptions::default());
    assert!(
        !diags.has_errors(),
        "{}",
        source::render_all(diags.iter(), &map)
    );
    (k.btf.get(), k.features.get())
}

#[test]
fn tracepoint_scripts_ask_for_neither_btf_nor_features() {
    let (btf, features) = questions(
        "tracepoint:syscalls:sys_enter_openat { @[comm] = count(); printf(\"%s\\n\", str(args->filename)); } interval:s:1 { exit(); }",
    );
    assert_eq!((btf, features), (0, 0));
}

#[test]
fn struct_members_ask_for_btf() {
    let (btf, _) = questions("tracepoint:syscalls:sys_enter_getppid { @ = sum(curtask->tgid); }");
    assert!(btf > 0);
}
