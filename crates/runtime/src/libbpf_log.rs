//! libbpf's log: silenced everywhere, captured while an object is opened
//! and loaded so that a verifier rejection can be reported with its log.

use std::sync::{Mutex, MutexGuard};

use libbpf_rs::PrintLevel;

/// `Some` while a load is capturing; libbpf messages otherwise go nowhere.
static CAPTURE: Mutex<Option<String>> = Mutex::new(None);
/// Serialises captures: the libbpf print callback is process-wide.
static LOAD_LOCK: Mutex<()> = Mutex::new(());

fn on_print(_level: PrintLevel, msg: String) {
    if let Ok(mut capture) = CAPTURE.lock()
        && let Some(buf) = capture.as_mut()
    {
        buf.push_str(&msg);
    }
}

/// Routes libbpf's messages (warnings included, e.g. a failed `RLIMIT_MEMLOCK`
/// bump) away from stderr. Cheap and idempotent; every entry point of the
/// crate calls it, so a callback installed by someone else is replaced.
pub fn silence_libbpf() {
    libbpf_rs::set_print(Some((PrintLevel::Warn, on_print)));
}

/// Captures libbpf's warnings until dropped or [`Capture::finish`]ed.
pub(crate) struct Capture {
    _lock: MutexGuard<'static, ()>,
}

impl Capture {
    pub(crate) fn start() -> Capture {
        silence_libbpf();
        let lock = LOAD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        *CAPTURE.lock().unwrap_or_else(|e| e.into_inner()) = Some(String::new());
        Capture { _lock: lock }
    }

    /// Everything libbpf said since [`Capture::start`] (and since the last call).
    pub(crate) fn take(&self) -> String {
        CAPTURE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        *CAPTURE.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// What libbpf's warnings say about a failed program load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProgLoadFailure {
    pub(crate) program: String,
    /// The verifier log between `-- BEGIN PROG LOAD LOG --` and `-- END PROG LOAD LOG --`.
    pub(crate) log: Option<String>,
}

/// Finds the program libbpf reports as failed (`prog 'NAME': BPF program load failed`)
/// and its verifier log, in the captured warnings.
pub(crate) fn parse_load_failure(text: &str) -> Option<ProgLoadFailure> {
    const FAILED: &str = "': BPF program load failed";
    let at = text.find(FAILED)?;
    let start = text[..at].rfind("prog '")? + "prog '".len();
    let program = text[start..at].to_string();
    let begin_marker = format!("prog '{program}': -- BEGIN PROG LOAD LOG --\n");
    let log = text.find(&begin_marker).and_then(|b| {
        let body = &text[b + begin_marker.len()..];
        let end = body.find("-- END PROG LOAD LOG --")?;
        Some(body[..end].to_string())
    });
    Some(ProgLoadFailure { program, log })
}

/// The index of the failing instruction: the last line of the form
/// `N: (xx) ...` (instruction `N`, opcode `xx` in hex) in a verifier log.
pub fn failing_insn(log: &str) -> Option<usize> {
    log.lines().rev().find_map(|line| {
        let (n, rest) = line.split_once(": (")?;
        let n: usize = n.parse().ok()?;
        let bytes = rest.as_bytes();
        let is_op = bytes.len() >= 3
            && bytes[0].is_ascii_hexdigit()
            && bytes[1].is_ascii_hexdigit()
            && bytes[2] == b')';
        is_op.then_some(n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "func#0 @0\n\
0: R1=ctx() R10=fp0\n\
0: (b7) r1 = 0                        ; R1_w=0\n\
1: (7b) *(u64 *)(r10 -8) = r1         ; R1_w=0 R10=fp0 fp-8_w=0\n\
2: (bf) r2 = r10                      ; R2_w=fp0 R10=fp0\n\
3: (07) r2 += -8                      ; R2_w=fp-8\n\
4: (18) r1 = 0xffff8881083c6c00       ; R1_w=map_ptr(map=weft_t,ks=8,vs=8)\n\
6: (85) call bpf_map_lookup_elem#1    ; R0_w=map_value_or_null(id=1,map=weft_t,ks=8,vs=8)\n\
7: (79) r0 = *(u64 *)(r0 +0)\n\
R0 invalid mem access 'map_value_or_null'\n\
processed 6 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0 mark_read 0\n";

    #[test]
    fn failing_insn_is_the_last_numbered_instruction() {
        assert_eq!(failing_insn(LOG), Some(7));
    }

    #[test]
    fn state_lines_and_branch_lines_are_not_instructions() {
        assert_eq!(
            failing_insn("0: R1=ctx() R10=fp0\nfrom 4 to 6: R0=1\n"),
            None
        );
        assert_eq!(failing_insn("back-edge from insn 3 to 1\n"), None);
    }

    #[test]
    fn load_failure_names_the_program_and_extracts_the_log() {
        let text = format!(
            "libbpf: prog 'bad_prog': BPF program load failed: Permission denied\n\
libbpf: prog 'bad_prog': -- BEGIN PROG LOAD LOG --\n{LOG}-- END PROG LOAD LOG --\n\
libbpf: prog 'bad_prog': failed to load: -13\n"
        );
        let f = parse_load_failure(&text).unwrap();
        assert_eq!(f.program, "bad_prog");
        assert_eq!(f.log.as_deref(), Some(LOG));
    }
}
