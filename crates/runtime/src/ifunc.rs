//! Where calls to an indirect function (`STT_GNU_IFUNC`) land on this
//! machine. The resolver picks an implementation from the CPU's features
//! when the library is loaded; weft asks the dynamic loader of its own
//! process, which has made the same choice for the libraries weft itself
//! has loaded (libc above all). Other libraries are not loaded for this:
//! loading one would run its constructors inside weft.

use std::ffi::{CStr, CString, c_void};
use std::os::unix::fs::MetadataExt;

use ktypes::KernelInfoError;

/// The implementation of `symbol` from the library at `path`, as an
/// address linked in that file.
pub(crate) fn target(path: &str, symbol: &str) -> Result<u64, KernelInfoError> {
    let unavailable = |why: String| KernelInfoError::Unavailable(why);
    let c_path = CString::new(path).map_err(|_| unavailable(format!("bad path {path:?}")))?;
    let c_symbol =
        CString::new(symbol).map_err(|_| unavailable(format!("bad symbol {symbol:?}")))?;
    // SAFETY: RTLD_NOLOAD only looks the library up among those already
    // loaded (nothing is loaded or initialised); the handle is closed below.
    let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return Err(unavailable(format!(
            "weft resolves indirect functions only in libraries it has loaded itself, and {path} is not one"
        )));
    }
    // SAFETY: handle is valid; dlsym of an IFUNC symbol runs its resolver,
    // which only reads the CPU features the loader recorded.
    let implementation = unsafe { libc::dlsym(handle, c_symbol.as_ptr()) } as u64;
    // SAFETY: handle came from dlopen and is not used afterwards.
    unsafe { libc::dlclose(handle) };
    if implementation == 0 {
        return Err(unavailable(format!(
            "the loader has no `{symbol}` in {path}"
        )));
    }
    let (object, bias) = object_holding(implementation)
        .ok_or_else(|| unavailable(format!("no loaded object holds `{symbol}`")))?;
    // The implementation must live in the very file that is probed.
    if !same_file(&object, path) {
        return Err(unavailable(format!(
            "`{symbol}` resolves into {object}, not into {path}"
        )));
    }
    Ok(implementation - bias)
}

/// The loaded object (file name, load bias) whose segments hold `addr`.
fn object_holding(addr: u64) -> Option<(String, u64)> {
    struct Search {
        addr: u64,
        found: Option<(String, u64)>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid info for the duration of the
        // call; data is the Search below.
        let (info, search) = unsafe { (&*info, &mut *(data as *mut Search)) };
        let phdrs = if info.dlpi_phdr.is_null() {
            &[][..]
        } else {
            // SAFETY: dlpi_phdr points at dlpi_phnum program headers.
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) }
        };
        let bias = info.dlpi_addr;
        let holds = phdrs.iter().any(|p| {
            p.p_type == libc::PT_LOAD
                && search.addr >= bias + p.p_vaddr
                && search.addr < bias + p.p_vaddr + p.p_memsz
        });
        if !holds {
            return 0;
        }
        let name = if info.dlpi_name.is_null() {
            String::new()
        } else {
            // SAFETY: a NUL-terminated name owned by the loader.
            unsafe { CStr::from_ptr(info.dlpi_name) }
                .to_string_lossy()
                .into_owned()
        };
        search.found = Some((name, bias));
        1
    }
    let mut search = Search { addr, found: None };
    // SAFETY: visit only reads what the loader passes and writes `search`.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut search as *mut Search as *mut c_void) };
    search.found
}

/// Two paths name the same file (device and inode).
fn same_file(a: &str, b: &str) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The libc this test process is linked with, from its own mappings.
    fn own_libc() -> String {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        maps.lines()
            .filter_map(|l| l.split_whitespace().nth(5))
            .find(|p| p.contains("/libc.so"))
            .expect("this test links libc dynamically")
            .to_string()
    }

    #[test]
    fn strlen_resolves_to_the_implementation_this_process_calls() {
        let libc_path = own_libc();
        let at = target(&libc_path, "strlen").expect("strlen resolves");
        // The same function this process reaches through `libc::strlen`.
        let called = libc::strlen as *const () as u64;
        let (object, bias) = object_holding(called).unwrap();
        if same_file(&object, &libc_path) {
            // (with lazy binding the address may be a PLT stub in this
            // binary instead; then only the libc side is checked)
            assert_eq!(at, called - bias);
        }
        // Not the resolver: the symbol's own value in the file.
        let bytes = std::fs::read(&libc_path).unwrap();
        let binary = uelf::Binary::parse(&bytes).unwrap();
        let sym = binary.function("strlen").unwrap();
        assert!(sym.ifunc);
        assert_ne!(at, sym.address);
        assert!(binary.file_offset(at).is_some());
    }

    #[test]
    fn a_library_weft_has_not_loaded_is_not_resolved() {
        let err = target("/nonexistent/libnothing.so", "strlen").unwrap_err();
        assert!(err.to_string().contains("not one"), "{err}");
    }
}
