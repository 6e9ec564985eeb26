//! `usdt:BINARY:PROVIDER:NAME` and `usdt:BINARY:NAME` (alias `U`):
//! statically defined probes (`sys/sdt.h`), found in the binary's
//! `.note.stapsdt` notes. `*` wildcards work in the provider and name.
//!
//! Each probe site becomes one program attached as a uprobe at the site's
//! file offset; a probe guarded by a semaphore attaches with the
//! semaphore's file offset as `ref_ctr_offset`, so the kernel raises it
//! while the probe is attached. The context is `struct pt_regs`; each
//! `argN` is read as the site's argument spec says (a register, a
//! constant, or memory relative to registers).

use ktypes::KernelInfo;
use source::Diagnostic;

use super::userbin;
use super::{AttachPointRef, Context, ListQuery, Needs, ProviderDef, ResolvedProbe, glob_match};
use crate::diagnostics as diag;

pub const DEF: ProviderDef = ProviderDef {
    name: "usdt",
    aliases: &["U"],
    usage: "usdt:BINARY:[PROVIDER:]NAME",
    help: "a statically defined probe (sys/sdt.h) of a user-space binary",
    resolve,
    list: Some(list),
    listed_by: super::Listed::User,
    pid_filter: true,
    needs: Needs::Bpf,
};

/// `-l 'usdt:BINARY:[PROVIDER:]PATTERN'`: the USDT probes of each binary
/// the pattern names (with `-p PID`, of every file the process has
/// mapped), sorted and without duplicates; `-lv` adds each probe's
/// arguments (those of its first site: sites of one probe share their count).
fn list(q: &ListQuery<'_>, kernel: &dyn KernelInfo) -> Result<Vec<String>, String> {
    let (users, pattern) = userbin::open_to_list(DEF.name, q.pattern, q.pid, kernel)?;
    let (prov, name) = pattern.split_once(':').unwrap_or(("*", pattern));
    let prov = if prov.is_empty() { "*" } else { prov };
    // Full probe name → argument specs of its sites.
    let mut probes: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for user in &users {
        for note in &user.binary.usdt {
            if glob_match(prov, &note.provider) && glob_match(name, &note.name) {
                probes
                    .entry(format!("usdt:{}:{}:{}", user.shown, note.provider, note.name))
                    .or_default()
                    .push(note.args.clone());
            }
        }
    }
    let mut out = Vec::new();
    for (probe, specs) in &probes {
        out.push(probe.clone());
        if !q.verbose {
            continue;
        }
        let spec = specs.first().map(String::as_str).unwrap_or("");
        match uelf::parse_arg_specs(spec) {
            Ok(args) => {
                out.push(format!("    {} argument(s)", args.len()));
                for (i, a) in args.iter().enumerate() {
                    let sign = if a.signed { "" } else { "u" };
                    out.push(format!("    {sign}int{} arg{i}", a.size * 8));
                }
            }
            Err(e) => out.push(format!("    arguments cannot be read: {e} (spec `{spec}`)")),
        }
    }
    Ok(out)
}

pub fn resolve(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    pid: Option<u32>,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    let usage = "usdt:BINARY:PROVIDER:NAME or usdt:BINARY:NAME (with -p PID: usdt:*:NAME or usdt:::NAME)";
    let (binary, provider, name) = match ap.parts {
        [binary, provider, name] => (binary.as_str(), provider.as_str(), name.as_str()),
        [binary, name] => (binary.as_str(), "*", name.as_str()),
        [name] if pid.is_some() => ("", "*", name.as_str()),
        _ => return Err(diag::bad_attach_point(ap.span, ap.raw, usage)),
    };
    // An empty provider is any provider; an empty binary, with -p, every
    // file the process has mapped.
    let provider = if provider.is_empty() { "*" } else { provider };
    if name.is_empty() || (binary.is_empty() && pid.is_none()) {
        return Err(diag::bad_attach_point(ap.span, ap.raw, usage));
    }
    let users = userbin::open_all(binary, pid, kernel, ap.span)?;
    let mut out = Vec::new();
    for user in &users {
        let (path, shown) = (&user.path, &user.shown);
        for note in &user.binary.usdt {
            if !glob_match(provider, &note.provider) || !glob_match(name, &note.name) {
                continue;
            }
            let full = format!("usdt:{shown}:{}:{}", note.provider, note.name);
            let offset = user
                .binary
                .file_offset(note.address)
                .ok_or_else(|| diag::address_not_mapped(ap.span, path, note.address))?;
            let ref_ctr_offset = match note.semaphore {
                0 => 0,
                sema => user
                    .binary
                    .file_offset(sema)
                    .ok_or_else(|| diag::address_not_mapped(ap.span, path, sema))?,
            };
            let args = uelf::parse_arg_specs(&note.args).map_err(|e| {
                diag::usdt_bad_args(ap.span, &full, &note.args, e.at, &e.to_string())
            })?;
            out.push(ResolvedProbe {
                provider: DEF.name,
                attach: abi::Attach::Uprobe {
                    path: path.clone(),
                    offset,
                    retprobe: false,
                    pid,
                    ref_ctr_offset,
                    from_wildcard: false,
                },
                section: "uprobe".into(),
                name: full,
                context: Context::Usdt { args },
                short: note.name.clone(),
            });
        }
    }
    if out.is_empty() {
        let wanted = if provider == "*" {
            name.to_string()
        } else {
            format!("{provider}:{name}")
        };
        return Err(match users.as_slice() {
            [one] if !wanted.contains(['*', '?']) => {
                diag::usdt_not_found(ap.span, &one.shown, &wanted)
            }
            _ => diag::no_probe_matches(ap.span, ap.raw),
        });
    }
    Ok(out)
}
