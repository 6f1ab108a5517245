//! The Linux enforcement of a [`Sandbox`]: what the kernel offers (probed once), what is
//! built in the parent before `fork` (the Landlock ruleset, the seccomp program, every
//! path as a C string), and what the child applies before `exec`.
//!
//! The child runs after `fork` in a parent that has other threads, so between `fork` and
//! `exec` only async-signal-safe work is allowed: raw system calls on data prepared in
//! advance, no allocation, no lock (`glibc`'s `fork()` takes malloc's locks, which another
//! thread may have held at the first fork: the second fork is a raw `clone`).
//!
//! The child's steps:
//! 1. `unshare` a user, mount, PID, IPC and (without network) network namespace;
//! 2. `clone` once more: a PID namespace starts with the *next* process, which is its
//!    PID 1. The first child stays outside as a supervisor: it closes every descriptor,
//!    waits for PID 1 and exits as it did (same code, same signal). PID 1 runs the
//!    program; when it ends, the kernel kills everything else in the namespace, so no
//!    process outlives the call, whatever `setsid` or double forks it tried;
//! 3. in PID 1: map the caller's uid and gid, make every mount private, bind each write
//!    root onto itself, hide the host's password and key files behind `/dev/null`, make
//!    the whole tree read-only (`mount_setattr(AT_RECURSIVE)`), then the write roots
//!    writable again, mount a `/proc` of the new PID namespace over the host's, and
//!    `chdir` again (the old working directory is on the read-only mount);
//! 4. `PR_SET_NO_NEW_PRIVS`, then Landlock's `restrict_self`, then the seccomp filter
//!    (last, so that it does not have to allow the steps before it).
//!
//! A step that fails makes the spawn fail: its error is the step's number times
//! [`STEP_BASE`] plus the OS error, decoded by [`decode_spawn_error`].

use std::path::{Path, PathBuf};

use super::{Mechanism, Sandbox, SandboxError};

/// The child reports a failed step as `step * STEP_BASE + errno` (errno is below 4096).
const STEP_BASE: i32 = 100_000;

const STEPS: &[&str] = &[
    "",
    "unshare",
    "clone",
    "uid and gid maps",
    "mount",
    "mount_setattr",
    "mounting /proc",
    "chdir",
    "PR_SET_NO_NEW_PRIVS",
    "landlock_restrict_self",
    "seccomp",
];

const STEP_UNSHARE: i32 = 1;
const STEP_CLONE: i32 = 2;
const STEP_IDMAP: i32 = 3;
const STEP_MOUNT: i32 = 4;
const STEP_MOUNT_SETATTR: i32 = 5;
const STEP_PROC: i32 = 6;
const STEP_CHDIR: i32 = 7;
const STEP_NO_NEW_PRIVS: i32 = 8;
const STEP_LANDLOCK: i32 = 9;
const STEP_SECCOMP: i32 = 10;

/// The sandbox error a spawn error stands for, when the child's setup failed.
pub(super) fn decode_spawn_error(error: &std::io::Error) -> Option<SandboxError> {
    let code = error.raw_os_error()?;
    let step = usize::try_from(code / STEP_BASE).ok()?;
    if step == 0 || step >= STEPS.len() {
        return None;
    }
    Some(SandboxError::Setup {
        step: STEPS[step],
        error: std::io::Error::from_raw_os_error(code % STEP_BASE).to_string(),
    })
}

/// Checks the kernel against what `sandbox` needs.
#[cfg(not(target_os = "linux"))]
pub(super) fn check(_sandbox: &Sandbox) -> Result<(), SandboxError> {
    Err(SandboxError::Unsupported)
}

/// Nothing to apply on this platform: [`check`] refuses every profile first.
#[cfg(not(target_os = "linux"))]
pub(super) struct Prepared;

#[cfg(not(target_os = "linux"))]
impl Prepared {
    pub(super) fn new(
        sandbox: &Sandbox,
        _cwd: &Path,
        _private: Option<&Path>,
    ) -> Result<Self, SandboxError> {
        check(sandbox).map(|()| Prepared)
    }
}

#[cfg(target_os = "linux")]
pub(super) use linux::{Prepared, check};

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::CString;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::sync::OnceLock;

    use super::*;

    // Landlock's ABI (include/uapi/linux/landlock.h); the libc crate has the system call
    // numbers but not these.
    const CREATE_RULESET_VERSION: u32 = 1;
    const RULE_PATH_BENEATH: libc::c_int = 1;
    const FS_EXECUTE: u64 = 1 << 0;
    const FS_WRITE_FILE: u64 = 1 << 1;
    const FS_READ_FILE: u64 = 1 << 2;
    const FS_READ_DIR: u64 = 1 << 3;
    /// Every right of ABI 1: from `EXECUTE` to `MAKE_SYM`.
    const FS_ABI1: u64 = (1 << 13) - 1;
    const FS_REFER: u64 = 1 << 13;
    const FS_TRUNCATE: u64 = 1 << 14;
    /// The rights that apply to a file (not only to a directory's entries).
    const FS_FILE: u64 = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE;
    const FS_READ: u64 = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
    const NET_BIND_TCP: u64 = 1 << 0;
    const NET_CONNECT_TCP: u64 = 1 << 1;
    const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
    const SCOPE_SIGNAL: u64 = 1 << 1;

    #[repr(C)]
    struct RulesetAttr {
        handled_access_fs: u64,
        handled_access_net: u64,
        scoped: u64,
    }

    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }

    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }

    const MOUNT_ATTR_RDONLY: u64 = 0x1;

    /// Devices every program may use: read (and write, for the sinks).
    const DEVICES: &[(&str, u64)] = &[
        ("/dev/null", FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE),
        ("/dev/zero", FS_READ_FILE),
        ("/dev/full", FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE),
        ("/dev/random", FS_READ_FILE),
        ("/dev/urandom", FS_READ_FILE),
        ("/dev/tty", FS_READ_FILE | FS_WRITE_FILE),
    ];

    /// Readable system information programs ask for (`nproc`, Python's `cpu_count`).
    const SYSTEM_INFO: &[&str] = &["/sys/devices/system/cpu", "/proc"];

    /// Host files that hold secrets of the machine, hidden behind `/dev/null` although
    /// `/etc` is readable.
    const HIDDEN: &[&str] = &[
        "/etc/shadow",
        "/etc/shadow-",
        "/etc/gshadow",
        "/etc/gshadow-",
        "/etc/sudoers",
        "/etc/security/opasswd",
    ];

    /// What this kernel offers, probed once.
    struct Support {
        landlock_abi: Result<u32, String>,
        namespaces: Result<(), String>,
        seccomp: Result<(), String>,
    }

    fn support() -> &'static Support {
        static SUPPORT: OnceLock<Support> = OnceLock::new();
        SUPPORT.get_or_init(|| Support {
            landlock_abi: landlock_abi(),
            namespaces: namespaces(),
            seccomp: seccomp(),
        })
    }

    fn landlock_abi() -> Result<u32, String> {
        // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the version
        // flag only returns the ABI version; it reads no memory.
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<RulesetAttr>(),
                0usize,
                CREATE_RULESET_VERSION,
            )
        };
        if abi < 1 {
            let error = io::Error::last_os_error();
            return Err(match error.raw_os_error() {
                Some(libc::ENOSYS) => "the kernel was built without Landlock".to_owned(),
                Some(libc::EOPNOTSUPP) => {
                    "Landlock is not enabled at boot (the `lsm=` list)".to_owned()
                }
                _ => error.to_string(),
            });
        }
        u32::try_from(abi).map_err(|_| format!("Landlock ABI {abi}"))
    }

    fn namespaces() -> Result<(), String> {
        let read = |path: &str| std::fs::read_to_string(path).map(|s| s.trim().to_owned());
        if !Path::new("/proc/self/ns/user").exists() {
            return Err("the kernel was built without user namespaces".to_owned());
        }
        if read("/proc/sys/user/max_user_namespaces").is_ok_and(|n| n == "0") {
            return Err("user.max_user_namespaces is 0".to_owned());
        }
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        if !root {
            if read("/proc/sys/kernel/unprivileged_userns_clone").is_ok_and(|n| n == "0") {
                return Err("kernel.unprivileged_userns_clone is 0".to_owned());
            }
            if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
                .is_ok_and(|n| n == "1")
            {
                return Err("AppArmor restricts unprivileged user namespaces \
                     (kernel.apparmor_restrict_unprivileged_userns is 1)"
                    .to_owned());
            }
        }
        Ok(())
    }

    fn seccomp() -> Result<(), String> {
        if ARCH.is_none() {
            return Err(format!(
                "no seccomp filter for the {} architecture",
                std::env::consts::ARCH
            ));
        }
        // SAFETY: PR_GET_SECCOMP takes no pointer.
        let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP) };
        if mode < 0 {
            return Err("the kernel was built without seccomp".to_owned());
        }
        Ok(())
    }

    /// Checks the kernel against what `sandbox` needs.
    pub(in super::super) fn check(sandbox: &Sandbox) -> Result<(), SandboxError> {
        let support = support();
        let missing = |mechanism: Mechanism, detail: &String| {
            if sandbox.allows_missing(mechanism) {
                Ok(())
            } else {
                Err(SandboxError::Missing {
                    mechanism,
                    detail: detail.clone(),
                })
            }
        };
        if let Err(detail) = &support.landlock_abi {
            missing(Mechanism::Landlock, detail)?;
        }
        if let Err(detail) = &support.namespaces {
            missing(Mechanism::Namespaces, detail)?;
        }
        if let Err(detail) = &support.seccomp {
            missing(Mechanism::Seccomp, detail)?;
        }
        Ok(())
    }

    /// Everything the child needs, made before `fork`.
    pub(in super::super) struct Prepared {
        namespaces: bool,
        network: bool,
        uid_map: Vec<u8>,
        gid_map: Vec<u8>,
        write_roots: Vec<CString>,
        hidden: Vec<CString>,
        cwd: CString,
        ruleset: Option<OwnedFd>,
        /// The read rights (of those the ruleset handles) for the new `/proc`.
        proc_access: u64,
        seccomp: Option<Vec<libc::sock_filter>>,
    }

    impl Prepared {
        /// Builds what the child applies for `sandbox`, with `cwd` its working directory
        /// and `private` its private temporary directory.
        pub(in super::super) fn new(
            sandbox: &Sandbox,
            cwd: &Path,
            private: Option<&Path>,
        ) -> Result<Self, SandboxError> {
            check(sandbox)?;
            let support = support();
            let c = |path: &Path| CString::new(path.as_os_str().as_bytes()).ok();
            let mut write: Vec<PathBuf> = sandbox
                .write_roots()
                .iter()
                .filter(|p| p.exists())
                .cloned()
                .collect();
            if let Some(private) = private {
                write.push(private.to_path_buf());
            }
            let mut hidden: Vec<CString> = HIDDEN
                .iter()
                .map(Path::new)
                .filter(|p| p.is_file())
                .filter_map(c)
                .collect();
            if let Ok(entries) = std::fs::read_dir("/etc/ssh") {
                for entry in entries.flatten() {
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    if name.starts_with("ssh_host_") && name.ends_with("_key") {
                        hidden.extend(c(&entry.path()));
                    }
                }
            }
            // SAFETY: getuid and getgid have no preconditions.
            let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
            let ruleset =
                match support.landlock_abi {
                    Ok(abi) => Some(ruleset(sandbox, abi, &write).map_err(|error| {
                        SandboxError::Setup {
                            step: "building the Landlock ruleset",
                            error: error.to_string(),
                        }
                    })?),
                    Err(_) => None,
                };
            Ok(Prepared {
                namespaces: support.namespaces.is_ok(),
                network: sandbox.allows_network(),
                uid_map: format!("{uid} {uid} 1\n").into_bytes(),
                gid_map: format!("{gid} {gid} 1\n").into_bytes(),
                write_roots: write.iter().filter_map(|p| c(p)).collect(),
                hidden,
                cwd: c(cwd).ok_or_else(|| SandboxError::Setup {
                    step: "chdir",
                    error: "the working directory has a NUL byte".to_owned(),
                })?,
                ruleset,
                proc_access: FS_READ,
                seccomp: support.seccomp.is_ok().then(seccomp_program),
            })
        }

        /// Applies the sandbox in the child, between `fork` and `exec`.
        ///
        /// # Safety
        ///
        /// Only in a `pre_exec` hook: it forks, and the supervisor it leaves behind never
        /// returns. It is async-signal-safe: system calls on `self`, nothing allocated.
        pub(in super::super) unsafe fn enter(&self) -> io::Result<()> {
            let fail = |step: i32| {
                let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
                Err(io::Error::from_raw_os_error(step * STEP_BASE + errno))
            };
            // SAFETY (the whole block): system calls on C strings and structs owned by
            // `self` or this stack frame; see the module docs for the order.
            unsafe {
                if self.namespaces {
                    let mut flags = libc::CLONE_NEWUSER
                        | libc::CLONE_NEWNS
                        | libc::CLONE_NEWPID
                        | libc::CLONE_NEWIPC;
                    if !self.network {
                        flags |= libc::CLONE_NEWNET;
                    }
                    if libc::unshare(flags) != 0 {
                        return fail(STEP_UNSHARE);
                    }
                    let pid =
                        libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_ulong, 0, 0, 0, 0);
                    if pid < 0 {
                        return fail(STEP_CLONE);
                    }
                    if pid > 0 {
                        supervise(pid as libc::pid_t);
                    }
                    // PID 1 of the new namespace from here on. If the supervisor is killed
                    // alone (tokio's kill_on_drop), the namespace goes with it.
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                    // Absent before Linux 3.19; the gid map then needs no "deny".
                    let _ = write_file(c"/proc/self/setgroups", b"deny");
                    if !write_file(c"/proc/self/uid_map", &self.uid_map)
                        || !write_file(c"/proc/self/gid_map", &self.gid_map)
                    {
                        return fail(STEP_IDMAP);
                    }
                    let none = std::ptr::null::<libc::c_char>();
                    if libc::mount(
                        none,
                        c"/".as_ptr(),
                        none,
                        libc::MS_REC | libc::MS_PRIVATE,
                        std::ptr::null(),
                    ) != 0
                    {
                        return fail(STEP_MOUNT);
                    }
                    for root in &self.write_roots {
                        if libc::mount(
                            root.as_ptr(),
                            root.as_ptr(),
                            none,
                            libc::MS_BIND | libc::MS_REC,
                            std::ptr::null(),
                        ) != 0
                        {
                            return fail(STEP_MOUNT);
                        }
                    }
                    for file in &self.hidden {
                        if libc::mount(
                            c"/dev/null".as_ptr(),
                            file.as_ptr(),
                            none,
                            libc::MS_BIND,
                            std::ptr::null(),
                        ) != 0
                        {
                            return fail(STEP_MOUNT);
                        }
                    }
                    let read_only = MountAttr {
                        attr_set: MOUNT_ATTR_RDONLY,
                        attr_clr: 0,
                        propagation: 0,
                        userns_fd: 0,
                    };
                    if !mount_setattr(c"/".as_ptr(), &read_only) {
                        return fail(STEP_MOUNT_SETATTR);
                    }
                    let writable = MountAttr {
                        attr_set: 0,
                        attr_clr: MOUNT_ATTR_RDONLY,
                        propagation: 0,
                        userns_fd: 0,
                    };
                    for root in &self.write_roots {
                        if !mount_setattr(root.as_ptr(), &writable) {
                            return fail(STEP_MOUNT_SETATTR);
                        }
                    }
                    if libc::mount(
                        c"proc".as_ptr(),
                        c"/proc".as_ptr(),
                        c"proc".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                        std::ptr::null(),
                    ) != 0
                    {
                        return fail(STEP_PROC);
                    }
                    // A rule on the host's `/proc` does not cover a new proc file system
                    // mounted over it: its rule is added here, on this spawn's own ruleset.
                    if let Some(ruleset) = &self.ruleset {
                        let fd = libc::open(
                            c"/proc".as_ptr(),
                            libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
                        );
                        if fd < 0 {
                            return fail(STEP_PROC);
                        }
                        let rule = PathBeneathAttr {
                            allowed_access: self.proc_access,
                            parent_fd: fd,
                        };
                        let added = libc::syscall(
                            libc::SYS_landlock_add_rule,
                            ruleset.as_raw_fd(),
                            RULE_PATH_BENEATH,
                            &raw const rule,
                            0u32,
                        );
                        libc::close(fd);
                        if added != 0 {
                            return fail(STEP_LANDLOCK);
                        }
                    }
                    if libc::chdir(self.cwd.as_ptr()) != 0 {
                        return fail(STEP_CHDIR);
                    }
                }
                if (self.ruleset.is_some() || self.seccomp.is_some())
                    && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0
                {
                    return fail(STEP_NO_NEW_PRIVS);
                }
                if let Some(ruleset) = &self.ruleset
                    && libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32)
                        != 0
                {
                    return fail(STEP_LANDLOCK);
                }
                if let Some(filter) = &self.seccomp {
                    let program = libc::sock_fprog {
                        len: filter.len() as libc::c_ushort,
                        filter: filter.as_ptr().cast_mut(),
                    };
                    if libc::prctl(
                        libc::PR_SET_SECCOMP,
                        libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                        &raw const program,
                    ) != 0
                    {
                        return fail(STEP_SECCOMP);
                    }
                }
            }
            Ok(())
        }
    }

    /// `mount_setattr(AT_FDCWD, path, AT_RECURSIVE, attr)`.
    ///
    /// # Safety
    ///
    /// `path` is a NUL-terminated string.
    unsafe fn mount_setattr(path: *const libc::c_char, attr: &MountAttr) -> bool {
        // SAFETY: the caller's string, a struct of the size given.
        unsafe {
            libc::syscall(
                libc::SYS_mount_setattr,
                libc::AT_FDCWD,
                path,
                libc::AT_RECURSIVE as libc::c_uint,
                std::ptr::from_ref(attr),
                std::mem::size_of::<MountAttr>(),
            ) == 0
        }
    }

    /// Writes `data` to `path` in one `write(2)`, as the id map files require.
    fn write_file(path: &std::ffi::CStr, data: &[u8]) -> bool {
        // SAFETY: open/write/close on a C string and a slice we own.
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return false;
            }
            let written = libc::write(fd, data.as_ptr().cast(), data.len());
            libc::close(fd);
            written == data.len() as isize
        }
    }

    /// The supervisor outside the PID namespace: waits for PID 1 and ends as it did.
    ///
    /// # Safety
    ///
    /// Only in the forked child: it closes every descriptor and never returns.
    unsafe fn supervise(pid: libc::pid_t) -> ! {
        // SAFETY: plain system calls; this process runs nothing else.
        unsafe {
            // The pipes belong to PID 1 alone: the caller sees their end when it ends.
            libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
            let mut status = 0;
            loop {
                let waited = libc::waitpid(pid, &raw mut status, 0);
                if waited == pid {
                    break;
                }
                if waited < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    libc::_exit(127);
                }
            }
            if libc::WIFSIGNALED(status) {
                let signal = libc::WTERMSIG(status);
                // The same signal, without a core dump of this process.
                libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong);
                libc::signal(signal, libc::SIG_DFL);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&raw mut set);
                libc::sigaddset(&raw mut set, signal);
                libc::sigprocmask(libc::SIG_UNBLOCK, &raw const set, std::ptr::null_mut());
                libc::kill(libc::getpid(), signal);
                libc::_exit(128 + signal);
            }
            libc::_exit(libc::WEXITSTATUS(status));
        }
    }

    /// The Landlock ruleset of `sandbox` for this ABI; `write` includes the private
    /// directory.
    fn ruleset(sandbox: &Sandbox, abi: u32, write: &[PathBuf]) -> io::Result<OwnedFd> {
        let mut fs = FS_ABI1;
        if abi >= 2 {
            fs |= FS_REFER;
        }
        if abi >= 3 {
            fs |= FS_TRUNCATE;
        }
        let net = if abi >= 4 && !sandbox.allows_network() {
            NET_BIND_TCP | NET_CONNECT_TCP
        } else {
            0
        };
        let scoped = if abi >= 6 {
            SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        } else {
            0
        };
        let attr = RulesetAttr {
            handled_access_fs: fs,
            handled_access_net: net,
            scoped,
        };
        let size = match abi {
            1..=3 => 8usize,
            4 | 5 => 16,
            _ => std::mem::size_of::<RulesetAttr>(),
        };
        // SAFETY: a struct at least `size` bytes long.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &raw const attr,
                size,
                0u32,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor (close-on-exec), owned by nobody else.
        let ruleset = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
        for (file, access) in system_rules() {
            add_opened(&ruleset, file, access & fs)?;
        }
        let mut rules: Vec<(&Path, u64)> = Vec::new();
        for root in sandbox.read_roots() {
            rules.push((root, FS_READ));
        }
        for root in write {
            rules.push((root, fs));
        }
        for (path, access) in rules {
            if let Some((file, access)) = open_rule(path, access) {
                add_opened(&ruleset, &file, access & fs)?;
            }
        }
        Ok(ruleset)
    }

    /// The rules every profile has (the system directories, `/proc`'s and `/sys`'s
    /// information, the devices), opened once per process: a call then pays one system
    /// call per rule instead of an `open`, an `fstat` and a `close` besides. A path that
    /// did not exist at the first call stays out (less access, never more).
    fn system_rules() -> &'static [(std::fs::File, u64)] {
        static RULES: OnceLock<Vec<(std::fs::File, u64)>> = OnceLock::new();
        RULES.get_or_init(|| {
            let paths = super::super::SYSTEM_READ_DIRS
                .iter()
                .chain(SYSTEM_INFO)
                .map(|dir| (*dir, FS_READ))
                .chain(DEVICES.iter().copied());
            paths
                .filter_map(|(path, access)| open_rule(Path::new(path), access))
                .collect()
        })
    }

    /// `path` opened for a rule, with `access` cut to a file's rights unless it is a
    /// directory; `None` when it does not exist.
    fn open_rule(path: &Path, access: u64) -> Option<(std::fs::File, u64)> {
        use std::os::unix::fs::OpenOptionsExt;
        // `O_PATH`, as Landlock recommends: nothing is opened for reading, so a device
        // (`/dev/tty`) or a FIFO kept for the process's life holds nothing.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH)
            .open(path)
            .ok()?;
        let is_dir = file.metadata().is_ok_and(|m| m.is_dir());
        Some((file, if is_dir { access } else { access & FS_FILE }))
    }

    /// Allows `access` beneath the opened `file`.
    fn add_opened(ruleset: &OwnedFd, file: &std::fs::File, access: u64) -> io::Result<()> {
        let rule = PathBeneathAttr {
            allowed_access: access,
            parent_fd: file.as_raw_fd(),
        };
        // SAFETY: a packed struct as the ABI defines it, and a descriptor we hold.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                RULE_PATH_BENEATH,
                &raw const rule,
                0u32,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    #[cfg(target_arch = "x86_64")]
    const ARCH: Option<u32> = Some(0xC000_003E);
    #[cfg(target_arch = "aarch64")]
    const ARCH: Option<u32> = Some(0xC000_00B7);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    const ARCH: Option<u32> = None;

    /// System calls a tool's process is refused (`EPERM`): changing mounts (our
    /// read-only tree), entering other namespaces, io_uring (its operations bypass this
    /// filter), kernel keyrings (not namespaced), and kernel-wide operations.
    const DENIED: &[libc::c_long] = &[
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_setns,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_syslog,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
    ];

    const fn statement(code: u32, k: u32) -> libc::sock_filter {
        libc::sock_filter {
            code: code as u16,
            jt: 0,
            jf: 0,
            k,
        }
    }

    /// `if A == k` falls through to the next instruction, else skips it.
    const fn if_equal(k: u32) -> libc::sock_filter {
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k,
        }
    }

    /// The seccomp program: any other architecture's system calls kill the process
    /// (SIGSYS); x32 system calls fail with `ENOSYS`; [`DENIED`] fail with `EPERM`;
    /// `socket(AF_UNIX, ...)` fails with `EAFNOSUPPORT`; everything else is allowed.
    fn seccomp_program() -> Vec<libc::sock_filter> {
        const LOAD: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
        const RET: u32 = libc::BPF_RET | libc::BPF_K;
        let errno = |e: i32| libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA);
        let mut program = vec![
            statement(LOAD, 4), // seccomp_data.arch
            if_equal(ARCH.unwrap_or(0)),
            libc::sock_filter {
                code: (libc::BPF_JMP | libc::BPF_JA) as u16,
                jt: 0,
                jf: 0,
                k: 1,
            },
            statement(RET, libc::SECCOMP_RET_KILL_PROCESS),
            statement(LOAD, 0), // seccomp_data.nr
        ];
        if cfg!(target_arch = "x86_64") {
            program.push(libc::sock_filter {
                code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
                jt: 0,
                jf: 1,
                k: 0x4000_0000,
            });
            program.push(statement(RET, errno(libc::ENOSYS)));
        }
        for &nr in DENIED {
            program.push(if_equal(nr as u32));
            program.push(statement(RET, errno(libc::EPERM)));
        }
        program.push(libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 3,
            k: libc::SYS_socket as u32,
        });
        program.push(statement(LOAD, 16)); // the low half of seccomp_data.args[0]
        program.push(if_equal(libc::AF_UNIX as u32));
        program.push(statement(RET, errno(libc::EAFNOSUPPORT)));
        program.push(statement(RET, libc::SECCOMP_RET_ALLOW));
        program
    }
}
