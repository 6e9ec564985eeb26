//! What one compilation works out once and asks for many times: a script
//! may name one library in dozens of uprobes, and reading and parsing a
//! 5 MB libcrypto for each cost 10 ms apiece. A [`Memo`] keeps such
//! results by key for as long as the kernel wrapper that holds it (one
//! `sema::check`); [`KernelInfo::memo`](crate::KernelInfo::memo) hands it
//! to the code that resolves probes.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Results by key, of any type.
#[derive(Default)]
pub struct Memo {
    items: RefCell<HashMap<String, Rc<dyn Any>>>,
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memo")
            .field("items", &self.items.borrow().len())
            .finish()
    }
}

impl Memo {
    /// The value kept under `key`, or `make`'s, kept when it succeeds
    /// (failures are not kept: they may read differently next time).
    pub fn get_or_try<T: 'static, E>(
        &self,
        key: &str,
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<Rc<T>, E> {
        if let Some(v) = self.items.borrow().get(key)
            && let Ok(v) = Rc::clone(v).downcast::<T>()
        {
            return Ok(v);
        }
        let v = Rc::new(make()?);
        self.items
            .borrow_mut()
            .insert(key.to_string(), Rc::clone(&v) as Rc<dyn Any>);
        Ok(v)
    }
}

/// A kernel that keeps, for as long as it lives, what is worked out from
/// it ([`Memo`]); every fact is the wrapped kernel's.
pub struct Memoized<'a> {
    inner: &'a dyn crate::KernelInfo,
    memo: Memo,
}

impl<'a> Memoized<'a> {
    pub fn new(inner: &'a dyn crate::KernelInfo) -> Memoized<'a> {
        Memoized {
            inner,
            memo: Memo::default(),
        }
    }
}

impl crate::KernelInfo for Memoized<'_> {
    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<crate::TracepointFormat, crate::KernelInfoError> {
        Ok((*self.tracepoint_format_shared(category, name)?).clone())
    }

    fn tracepoint_format_shared(
        &self,
        category: &str,
        name: &str,
    ) -> Result<std::sync::Arc<crate::TracepointFormat>, crate::KernelInfoError> {
        // A script may name one tracepoint in many probes (a 10,000-line
        // script names each syscall's ~7 times): read its format once.
        let key = format!("tracepoint format {category}:{name}");
        let format = self
            .memo
            .get_or_try(&key, || self.inner.tracepoint_format_shared(category, name))?;
        Ok(std::sync::Arc::clone(&format))
    }

    fn tracepoints(&self) -> Result<Vec<(String, String)>, crate::KernelInfoError> {
        self.inner.tracepoints()
    }

    fn read_file(&self, path: &str) -> Result<Vec<u8>, crate::KernelInfoError> {
        self.inner.read_file(path)
    }

    fn ifunc_target(&self, path: &str, symbol: &str) -> Result<u64, crate::KernelInfoError> {
        self.inner.ifunc_target(path, symbol)
    }

    fn list_dir(&self, path: &str) -> Result<Vec<String>, crate::KernelInfoError> {
        self.inner.list_dir(path)
    }

    fn executable_search_path(&self) -> Vec<String> {
        self.inner.executable_search_path()
    }

    fn debuginfo_dirs(&self) -> Vec<String> {
        self.inner.debuginfo_dirs()
    }

    fn btf(&self) -> Result<&crate::Btf, crate::KernelInfoError> {
        self.inner.btf()
    }

    fn tracing_features(&self) -> Option<crate::TracingFeatures> {
        self.inner.tracing_features()
    }

    fn kernel_functions(&self) -> Result<Vec<crate::KernelFunction>, crate::KernelInfoError> {
        self.inner.kernel_functions()
    }

    fn pid_namespace(&self) -> Option<crate::PidNamespace> {
        self.inner.pid_namespace()
    }

    fn cgroup_id(&self, path: &str) -> Result<u64, crate::KernelInfoError> {
        self.inner.cgroup_id(path)
    }

    fn memo(&self) -> Option<&Memo> {
        Some(&self.memo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KernelInfo;

    /// A tracepoint's format is read once however many probes name it.
    #[test]
    fn reads_a_tracepoint_format_once() {
        struct Counting(std::cell::Cell<u32>);
        impl KernelInfo for Counting {
            fn tracepoint_format(
                &self,
                _: &str,
                _: &str,
            ) -> Result<crate::TracepointFormat, crate::KernelInfoError> {
                self.0.set(self.0.get() + 1);
                crate::parse_format(
                    "name: x\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n",
                )
            }
            fn tracepoints(&self) -> Result<Vec<(String, String)>, crate::KernelInfoError> {
                Ok(Vec::new())
            }
        }
        let kernel = Counting(std::cell::Cell::new(0));
        let memoized = Memoized::new(&kernel);
        for _ in 0..3 {
            let f = memoized
                .tracepoint_format("syscalls", "sys_enter_x")
                .unwrap();
            assert!(f.field("a").is_some());
        }
        memoized
            .tracepoint_format("syscalls", "sys_enter_y")
            .unwrap();
        assert_eq!(kernel.0.get(), 2);
    }

    /// Every fact reaches the kernel behind the memo (a wildcard in a
    /// uprobe's file name lists the directory through it).
    #[test]
    fn passes_directory_listings_through() {
        let fixture = crate::FixtureKernel::typical()
            .with_file("/opt/app/one", vec![1])
            .with_file("/opt/app/two", vec![2]);
        let memoized = Memoized::new(&fixture);
        assert_eq!(memoized.list_dir("/opt/app").unwrap(), ["one", "two"]);
    }

    #[test]
    fn makes_once_and_keeps_only_successes() {
        let memo = Memo::default();
        let mut made = 0;
        for _ in 0..3 {
            let v = memo
                .get_or_try::<u32, ()>("a", || {
                    made += 1;
                    Ok(7)
                })
                .unwrap();
            assert_eq!(*v, 7);
        }
        assert_eq!(made, 1);
        assert!(memo.get_or_try::<u32, &str>("b", || Err("no")).is_err());
        assert_eq!(*memo.get_or_try::<u32, ()>("b", || Ok(2)).unwrap(), 2);
    }
}
