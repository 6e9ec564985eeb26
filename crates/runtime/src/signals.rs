//! SIGINT/SIGTERM set a flag the event loop checks; the loop's bounded
//! waits make sure it is seen promptly. SIGHUP (installed by the agent
//! only) sets another: reload the configuration.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static RELOAD: AtomicBool = AtomicBool::new(false);

extern "C" fn on_reload(_: libc::c_int) {
    RELOAD.store(true, Ordering::SeqCst);
}

/// SIGHUP asks for a reload (`weft agent`) instead of ending the process.
pub fn install_reload() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_reload as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGHUP, &action, std::ptr::null_mut());
    }
}

/// Whether SIGHUP came since the last call.
pub fn reload_requested() -> bool {
    RELOAD.swap(false, Ordering::SeqCst)
}

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// SIGUSR1 came and a `self:signal:SIGUSR1` probe has not run for it yet
/// (several arrivals between two looks run the probes once, as a pending
/// signal is delivered once).
static USR1: AtomicBool = AtomicBool::new(false);

extern "C" fn on_usr1(_: libc::c_int) {
    USR1.store(true, Ordering::SeqCst);
}

/// Catches `signal` for the script's `self:signal` probes, which the event
/// loop runs ([`self_signal_pending`]); SIGUSR1 is the only one they take.
pub fn install_self_signal(signal: i32) {
    if signal != libc::SIGUSR1 {
        return;
    }
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_usr1 as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut());
    }
}

/// Whether SIGUSR1 came since the last call.
pub fn self_signal_pending() -> bool {
    USR1.swap(false, Ordering::SeqCst)
}
