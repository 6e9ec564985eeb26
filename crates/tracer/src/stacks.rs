//! Gives `output` the frames of stacks and the names of symbols: stack ids
//! are read from the session's stack-trace maps, kernel addresses resolved
//! with `/proc/kallsyms` (read once, on first use), user addresses with the
//! runtime's per-pid user symbolizer.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use abi::{Layout, Manifest, MapValue, StackMode};
use output::{FileOffset, Frame, Stack, StackResolver, Symbol, Value};
use runtime::Session;
use runtime::symbols::{ExitMaps, Kallsyms, ResolvedSymbol, UserSymbols};

/// Symbol tables kept for the whole run.
pub struct Symbols {
    kernel: Option<Kallsyms>,
    user: Option<UserSymbols>,
    /// User stacks already resolved while running: `(limit, id, pid)`.
    seen_user_stacks: HashSet<(u32, i64, u32)>,
    /// When maps were last looked at for new user stacks.
    last_pass: Option<Instant>,
    /// Memory maps of exited processes, for their user symbols.
    exit_maps: ExitMaps,
    /// The least time between two passes over the maps for new user stacks.
    pass_interval: Duration,
    /// Only these maps (by script name) are passed over; `None`: every map.
    live_maps: Option<Vec<String>>,
    /// Time spent reading `/proc/kallsyms` and reading maps for live passes.
    kallsyms_time: Duration,
    pass_time: Duration,
    /// Cgroup ids back to paths, walked on first use.
    cgroups: Option<runtime::cgroups::CgroupPaths>,
    /// The script's `strftime()` formats (`Manifest::time_formats`).
    time_formats: Vec<String>,
    /// The text of `/etc/passwd`, read on the first `username` printed.
    passwd: Option<String>,
    /// Kernel stacks resolved so far, by (frame limit, id): a stack id is
    /// never reused (weft never replaces stored stacks), and a profile that
    /// prints a stack with every sample would otherwise read it each time.
    kernel_stacks: std::collections::HashMap<(u32, u32, StackMode), Vec<Frame>>,
}

impl Default for Symbols {
    fn default() -> Self {
        Symbols::new(DEFAULT_PASS_INTERVAL, None)
    }
}

/// Where the time of symbolization went (`weft profile -v`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SymbolTimes {
    /// Reading and sorting `/proc/kallsyms`.
    pub kallsyms: Duration,
    /// Reading process mappings and symbolizing user addresses (blazesym).
    pub user: Duration,
    /// Reading maps in the live passes for new user stacks.
    pub passes: Duration,
    /// Reading, decoding and handing on the maps at exit, symbols aside
    /// (set by the event loop).
    pub exit_maps: Duration,
}

/// Scripts: a process that lives a fifth of a second has its stacks resolved.
const DEFAULT_PASS_INTERVAL: Duration = Duration::from_millis(200);

/// Whether a layout holds a user stack or `usym` value.
fn holds_user(layout: &Layout) -> bool {
    match layout {
        Layout::UStack { .. } | Layout::USym => true,
        Layout::Tuple { fields, .. } => fields.iter().any(|f| holds_user(&f.layout)),
        _ => false,
    }
}

/// Whether the program prints user stacks or `usym`s (map keys and values,
/// printf arguments, stream record fields), whose names are found through the memory map of
/// their process: then the memory map of the `-c` command is kept as it
/// exits (see `child_exit`); otherwise it runs untraced.
pub fn needs_user_symbols(manifest: &Manifest) -> bool {
    let maps = manifest.maps.iter().any(|m| {
        m.key.as_ref().is_some_and(holds_user)
            || matches!(&m.value, MapValue::Plain(l) if holds_user(l))
    });
    let printfs = manifest
        .printfs
        .iter()
        .flat_map(|p| &p.args)
        .any(|a| holds_user(&a.field.layout));
    let streams = manifest
        .streams
        .iter()
        .flat_map(|s| &s.fields)
        .any(|f| holds_user(&f.field.layout));
    maps || printfs || streams
}

impl Symbols {
    /// Symbols whose live passes run at most every `pass_interval`, over
    /// `live_maps` only (all maps if `None`).
    pub fn new(pass_interval: Duration, live_maps: Option<Vec<String>>) -> Symbols {
        Symbols {
            kernel: None,
            user: None,
            seen_user_stacks: HashSet::new(),
            last_pass: None,
            pass_interval,
            live_maps,
            exit_maps: ExitMaps::default(),
            kallsyms_time: Duration::ZERO,
            pass_time: Duration::ZERO,
            cgroups: None,
            time_formats: Vec::new(),
            passwd: None,
            kernel_stacks: std::collections::HashMap::new(),
        }
    }

    /// The same, formatting `strftime()` values in the script's `formats`.
    pub fn with_time_formats(mut self, formats: &[String]) -> Symbols {
        self.time_formats = formats.to_vec();
        self
    }

    pub fn times(&self) -> SymbolTimes {
        SymbolTimes {
            kallsyms: self.kallsyms_time,
            user: self
                .user
                .as_ref()
                .map_or(Duration::ZERO, |u| u.time_spent()),
            passes: self.pass_time,
            exit_maps: Duration::ZERO,
        }
    }

    /// Keeps process `pid`'s mappings as they are now (a process met for
    /// the first time, or after `exec`), so its stacks resolve after it exits.
    pub fn remember_process(&mut self, pid: u32) {
        self.user().refresh_process(pid);
    }

    fn kernel(&mut self) -> &Kallsyms {
        if self.kernel.is_none() {
            let started = runtime::symbols::thread_cpu_time();
            self.kernel = Some(Kallsyms::load());
            self.kallsyms_time += runtime::symbols::thread_cpu_time().saturating_sub(started);
        }
        self.kernel.get_or_insert_with(Kallsyms::default)
    }

    fn user(&mut self) -> &mut UserSymbols {
        let exit_maps = &self.exit_maps;
        self.user
            .get_or_insert_with(|| UserSymbols::with_exit_maps(exit_maps.clone()))
    }

    /// Where the memory maps of exited processes are kept for the user
    /// symbolizer (see `child_exit`).
    pub fn exit_maps(&self) -> ExitMaps {
        self.exit_maps.clone()
    }

    /// Resolves, while their processes still live, the user stacks and
    /// `usym`s stored in maps, so the names are cached per process when the
    /// maps print (often after the process exited). Only new stack ids and
    /// new `(pid, address)` pairs are resolved; nothing happens more often
    /// than every pass interval. The kernel side is not touched.
    pub fn resolve_live_user(&mut self, session: &Session, manifest: &Manifest) {
        if self
            .last_pass
            .is_some_and(|t| t.elapsed() < self.pass_interval)
        {
            return;
        }
        let started = runtime::symbols::thread_cpu_time();
        self.last_pass = Some(Instant::now());
        let user_before = self
            .user
            .as_ref()
            .map_or(Duration::ZERO, |u| u.time_spent());
        self.live_pass(session, manifest);
        let user_after = self
            .user
            .as_ref()
            .map_or(Duration::ZERO, |u| u.time_spent());
        self.pass_time += runtime::symbols::thread_cpu_time()
            .saturating_sub(started)
            .saturating_sub(user_after - user_before);
    }

    fn live_pass(&mut self, session: &Session, manifest: &Manifest) {
        for spec in &manifest.maps {
            if self
                .live_maps
                .as_ref()
                .is_some_and(|only| !only.contains(&spec.name))
            {
                continue;
            }
            let key = spec.key.as_ref().filter(|k| holds_user(k));
            let value = match &spec.value {
                MapValue::Plain(l) if holds_user(l) => Some(l),
                _ => None,
            };
            if key.is_none() && value.is_none() {
                continue;
            }
            // A map that cannot be read now is tried again at print time.
            let Ok(entries) = session.map_entries(&spec.bpf_name) else {
                continue;
            };
            for (k, values) in &entries {
                if let Some(layout) = key {
                    self.remember(session, &output::decode(layout, k));
                }
                if let (Some(layout), Some(v)) = (value, values.first()) {
                    self.remember(session, &output::decode(layout, v));
                }
            }
        }
    }

    /// Resolves one value's user stacks and symbols into the per-pid cache.
    fn remember(&mut self, session: &Session, value: &Value) {
        match value {
            Value::Stack(stack) if stack.user && stack.id >= 0 => {
                let seen = (stack.limit, stack.id, stack.pid);
                if self.seen_user_stacks.contains(&seen) {
                    return;
                }
                let Ok(id) = u32::try_from(stack.id) else {
                    return;
                };
                let map = abi::stack::stack_map_name(stack.limit);
                let addrs = session.stack_addresses(&map, id).unwrap_or_default();
                if !addrs.is_empty() {
                    self.user().frames(stack.pid, &addrs);
                    self.seen_user_stacks.insert(seen);
                }
            }
            Value::Sym(sym) if sym.user => {
                self.user().lookup(sym.pid, &[sym.addr]);
            }
            Value::Tuple(items) => {
                for item in items {
                    self.remember(session, item);
                }
            }
            _ => {}
        }
    }

    /// Cgroup ids back to paths (`cgroup_path()`, stream records).
    pub fn cgroups(&mut self) -> &mut runtime::cgroups::CgroupPaths {
        self.cgroups
            .get_or_insert_with(runtime::cgroups::CgroupPaths::new)
    }

    /// The name of user `uid` from `/etc/passwd` (read once), empty when no
    /// user has it; a file that cannot be read is said once on stderr, as
    /// bpftrace says it, and every name is then empty.
    pub fn username(&mut self, uid: u32) -> String {
        const PASSWD: &str = "/etc/passwd";
        let passwd = self.passwd.get_or_insert_with(|| {
            std::fs::read_to_string(PASSWD).unwrap_or_else(|e| {
                // bpftrace words it as strerror does: `No such file or directory`.
                let why = e.to_string();
                let why = why.split(" (os error").next().unwrap_or(&why);
                eprintln!("ERROR: {why}: {PASSWD}");
                String::new()
            })
        });
        output::names::passwd_user(passwd, uid)
            .unwrap_or_default()
            .to_string()
    }

    /// A resolver reading stacks from `session`.
    pub fn resolver<'a>(&'a mut self, session: &'a Session) -> Resolver<'a> {
        Resolver {
            session,
            symbols: self,
        }
    }
}

/// [`StackResolver`] over one session.
pub struct Resolver<'a> {
    session: &'a Session,
    symbols: &'a mut Symbols,
}

fn symbol(s: ResolvedSymbol) -> Symbol {
    Symbol {
        name: s.name,
        offset: s.offset,
        module: s.module,
    }
}

impl Resolver<'_> {
    /// Reads stack `id` from its map and symbolizes its frames.
    fn read_frames(&mut self, stack: &Stack, id: u32) -> Vec<Frame> {
        let map = abi::stack::stack_map_name(stack.limit);
        // A stack that cannot be read prints empty rather than failing the output.
        let addrs = self.session.stack_addresses(&map, id).unwrap_or_default();
        // raw and build_id stacks print addresses, not symbols.
        match stack.mode {
            StackMode::Raw => {
                return addrs
                    .iter()
                    .map(|&addr| Frame {
                        addr,
                        symbol: None,
                        file: None,
                    })
                    .collect();
            }
            StackMode::BuildId if stack.user => {
                let files = self.symbols.user().build_ids(stack.pid, &addrs);
                return addrs
                    .iter()
                    .zip(files)
                    .map(|(&addr, file)| Frame {
                        addr,
                        symbol: None,
                        file: file.map(|(id, offset)| FileOffset {
                            build_id: id.iter().map(|b| format!("{b:02x}")).collect(),
                            offset,
                        }),
                    })
                    .collect();
            }
            _ => {}
        }
        let syms: Vec<Option<ResolvedSymbol>> = if stack.user {
            self.symbols.user().frames(stack.pid, &addrs)
        } else {
            let kernel = self.symbols.kernel();
            addrs
                .iter()
                .enumerate()
                .map(|(i, &a)| kernel.lookup_frame(a, i == 0))
                .collect()
        };
        addrs
            .iter()
            .zip(syms)
            .map(|(&addr, s)| Frame {
                addr,
                symbol: s.map(symbol),
                file: None,
            })
            .collect()
    }
}

impl StackResolver for Resolver<'_> {
    fn frames(&mut self, stack: &Stack) -> Vec<Frame> {
        let Ok(id) = u32::try_from(stack.id) else {
            return Vec::new();
        };
        if !stack.user {
            let key = (stack.limit, id, stack.mode);
            if let Some(frames) = self.symbols.kernel_stacks.get(&key) {
                return frames.clone();
            }
            let frames = self.read_frames(stack, id);
            if !frames.is_empty() {
                self.symbols.kernel_stacks.insert(key, frames.clone());
            }
            return frames;
        }
        self.read_frames(stack, id)
    }

    fn timestamp(&mut self, ns: u64, format: u32) -> Option<String> {
        Some(crate::times::time_text(
            &self.symbols.time_formats,
            ns,
            format,
        ))
    }

    fn symbol(&mut self, user: bool, addr: u64, pid: u32) -> Option<String> {
        let found = if user {
            self.symbols.user().lookup(pid, &[addr]).pop().flatten()
        } else {
            self.symbols.kernel().lookup(addr)
        };
        found.map(|s| s.name)
    }

    fn username(&mut self, uid: u32) -> Option<String> {
        Some(self.symbols.username(uid))
    }

    fn cgroup_path(&mut self, id: u64, filter: u32) -> Option<String> {
        let filter = self
            .session
            .manifest()
            .cgroup_path_filters
            .get(filter as usize)
            .map_or("*", String::as_str);
        Some(self.symbols.cgroups().bpftrace_paths(id, filter))
    }
}

/// Resolves the stacks and symbols among printf arguments.
pub fn resolve_args(args: &mut [Value], resolver: &mut Resolver<'_>) {
    for a in args {
        output::resolve_value(a, resolver);
    }
}
