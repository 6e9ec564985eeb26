//! Numbers printed as names in user space, as bpftrace's current release
//! prints them: `strerror(errno)` as the error's text, `signal_name(sig)`
//! as the signal's and `username`'s uid as the user's name in the text of
//! `/etc/passwd` (which the caller reads; what the BPF program keeps is
//! the number).

/// The name of user `uid` in `passwd` (the text of `/etc/passwd`): the
/// first line whose third field is that number, as bpftrace looks it up;
/// `None` when no line is.
pub fn passwd_user(passwd: &str, uid: u32) -> Option<&str> {
    let uid = uid.to_string();
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        fields.next()?;
        (fields.next()? == uid).then_some(name)
    })
}

/// The text of each errno, by number, as Linux's `asm-generic/errno*.h`
/// describe them (EAGAIN as EWOULDBLOCK too); `""` for numbers no errno has.
const ERRNO_TEXT: [&str; 134] = [
    "Success",
    "Operation not permitted",
    "No such file or directory",
    "No such process",
    "Interrupted system call",
    "I/O error",
    "No such device or address",
    "Argument list too long",
    "Exec format error",
    "Bad file number",
    "No child processes",
    "Try again (operation would block)",
    "Out of memory",
    "Permission denied",
    "Bad address",
    "Block device required",
    "Device or resource busy",
    "File exists",
    "Cross-device link",
    "No such device",
    "Not a directory",
    "Is a directory",
    "Invalid argument",
    "File table overflow",
    "Too many open files",
    "Not a typewriter",
    "Text file busy",
    "File too large",
    "No space left on device",
    "Illegal seek",
    "Read-only file system",
    "Too many links",
    "Broken pipe",
    "Math argument out of domain of func",
    "Math result not representable",
    "Resource deadlock would occur",
    "File name too long",
    "No record locks available",
    "Invalid system call number",
    "Directory not empty",
    "Too many symbolic links encountered",
    "",
    "No message of desired type",
    "Identifier removed",
    "Channel number out of range",
    "Level 2 not synchronized",
    "Level 3 halted",
    "Level 3 reset",
    "Link number out of range",
    "Protocol driver not attached",
    "No CSI structure available",
    "Level 2 halted",
    "Invalid exchange",
    "Invalid request descriptor",
    "Exchange full",
    "No anode",
    "Invalid request code",
    "Invalid slot",
    "",
    "Bad font file format",
    "Device not a stream",
    "No data available",
    "Timer expired",
    "Out of streams resources",
    "Machine is not on the network",
    "Package not installed",
    "Object is remote",
    "Link has been severed",
    "Advertise error",
    "Srmount error",
    "Communication error on send",
    "Protocol error",
    "Multihop attempted",
    "RFS specific error",
    "Not a data message",
    "Value too large for defined data type",
    "Name not unique on network",
    "File descriptor in bad state",
    "Remote address changed",
    "Can not access a needed shared library",
    "Accessing a corrupted shared library",
    ".lib section in a.out corrupted",
    "Attempting to link in too many shared libraries",
    "Cannot exec a shared library directly",
    "Illegal byte sequence",
    "Interrupted system call should be restarted",
    "Streams pipe error",
    "Too many users",
    "Socket operation on non-socket",
    "Destination address required",
    "Message too long",
    "Protocol wrong type for socket",
    "Protocol not available",
    "Protocol not supported",
    "Socket type not supported",
    "Operation not supported on transport endpoint",
    "Protocol family not supported",
    "Address family not supported by protocol",
    "Address already in use",
    "Cannot assign requested address",
    "Network is down",
    "Network is unreachable",
    "Network dropped connection because of reset",
    "Software caused connection abort",
    "Connection reset by peer",
    "No buffer space available",
    "Transport endpoint is already connected",
    "Transport endpoint is not connected",
    "Cannot send after transport endpoint shutdown",
    "Too many references: cannot splice",
    "Connection timed out",
    "Connection refused",
    "Host is down",
    "No route to host",
    "Operation already in progress",
    "Operation now in progress",
    "Stale file handle",
    "Structure needs cleaning",
    "Not a XENIX named type file",
    "No XENIX semaphores available",
    "Is a named type file",
    "Remote I/O error",
    "Quota exceeded",
    "No medium found",
    "Wrong medium type",
    "Operation Canceled",
    "Required key not available",
    "Key has expired",
    "Key has been revoked",
    "Key was rejected by service",
    "Owner died",
    "State not recoverable",
    "Operation not possible due to RF-kill",
    "Memory page has hardware error",
];

/// `strerror(n)`: the errno's text (a negative `-errno` as returned by the
/// kernel reads as its errno), `Unknown error` for others.
pub fn errno_text(n: i64) -> &'static str {
    usize::try_from(n.unsigned_abs())
        .ok()
        .and_then(|i| ERRNO_TEXT.get(i))
        .filter(|t| !t.is_empty())
        .copied()
        .unwrap_or("Unknown error")
}

/// The classic signals' names as the C library's `strsignal` gives them.
const SIGNAL_TEXT: [&str; 32] = [
    "Unknown signal 0",
    "Hangup",
    "Interrupt",
    "Quit",
    "Illegal instruction",
    "Trace/breakpoint trap",
    "Aborted",
    "Bus error",
    "Floating point exception",
    "Killed",
    "User defined signal 1",
    "Segmentation fault",
    "User defined signal 2",
    "Broken pipe",
    "Alarm clock",
    "Terminated",
    "Stack fault",
    "Child exited",
    "Continued",
    "Stopped (signal)",
    "Stopped",
    "Stopped (tty input)",
    "Stopped (tty output)",
    "Urgent I/O condition",
    "CPU time limit exceeded",
    "File size limit exceeded",
    "Virtual timer expired",
    "Profiling timer expired",
    "Window changed",
    "I/O possible",
    "Power failure",
    "Bad system call",
];

/// `signal_name(n)`: `strsignal`'s text for 0..=64 (32 and 33, which the C
/// library keeps for itself, are unknown; 34.. are the real-time signals),
/// `N/A` past them, as bpftrace prints.
pub fn signal_text(n: i64) -> String {
    match n {
        0..=31 => SIGNAL_TEXT[n as usize].to_string(),
        32 | 33 => format!("Unknown signal {n}"),
        34..=64 => format!("Real-time signal {}", n - 34),
        _ => "N/A".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwd_user_is_the_first_line_of_the_uid() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n\
            daemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n\
            broken line\n\
            toor:x:0:0::/root:/bin/sh\n\
            alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\n";
        assert_eq!(passwd_user(passwd, 0), Some("root"));
        assert_eq!(passwd_user(passwd, 1000), Some("alice"));
        assert_eq!(passwd_user(passwd, 1), Some("daemon"));
        assert_eq!(passwd_user(passwd, 10), None);
        assert_eq!(passwd_user("", 0), None);
    }
}
