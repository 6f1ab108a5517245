//! The escape corpus: `bash` of the confined pack (`pack_confined`, the kernel sandbox)
//! against attempts to reach outside its root, each checked **by the host** after the
//! call: the file does not exist, the outside file's content, mode and mtime are
//! unchanged, a listener got no connection or datagram, the victim process lives, no
//! process outlived its call. Everyday work inside the root must still succeed.
//!
//! Under `CI` a kernel that cannot enforce the sandbox fails the test; elsewhere it is
//! reported and the test returns.

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pi_tool::context::ExtensionContext;
use pi_tool::pack::ToolPack;
use pi_tool::{AbortSignal, OnUpdate, ToolInvocation, json};
use pi_tool_core::safety::Sandbox;

#[path = "support/sandbox_dirs.rs"]
mod sandbox_dirs;
use sandbox_dirs::{Dirs, sandbox_dirs};

struct Fixture {
    base: PathBuf,
    root: PathBuf,
    outside: PathBuf,
    victim: PathBuf,
    pack: ToolPack,
}

impl Fixture {
    fn new(name: &str) -> Option<Fixture> {
        let Dirs {
            base,
            root,
            outside,
        } = sandbox_dirs("pi-escape", name)?;
        let victim = outside.join("victim.txt");
        std::fs::write(&victim, "victim\n").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(outside.join("secret.txt"), "host-secret-4711\n").unwrap();
        let old = std::process::Command::new("touch")
            .args(["-d", "2001-02-03 04:05:06"])
            .arg(&victim)
            .status()
            .unwrap();
        assert!(old.success());
        let pack = pi_tool_coding::pack_confined(&root);
        Some(Fixture {
            base,
            root,
            outside,
            victim,
            pack,
        })
    }

    /// Runs `command` through the confined pack's `bash`; the text the model reads.
    async fn bash(&self, command: &str) -> String {
        let tool = self.pack.get("bash").expect("bash is served");
        let args = json!({ "command": command, "timeout": 20 });
        let args = tool.check_arguments(&args).unwrap().into_owned();
        let call = ToolInvocation::new("t", &args, AbortSignal::never(), OnUpdate::none())
            .with_context(ExtensionContext::builder(&self.root).build());
        match tool.execute(call).await {
            Ok(result) => result.text_content(),
            Err(error) => error.message().to_owned(),
        }
    }

    fn o(&self, name: &str) -> String {
        self.outside.join(name).display().to_string()
    }

    /// The victim file as the host sees it: content, mode, mtime.
    fn victim_state(&self) -> (String, u32, i64) {
        let meta = std::fs::metadata(&self.victim).expect("the victim file still exists");
        (
            std::fs::read_to_string(&self.victim).unwrap(),
            meta.mode() & 0o7777,
            meta.mtime(),
        )
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chmod")
            .args(["-R", "u+rwX"])
            .arg(&self.base)
            .status();
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// Host processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(mut file) = std::fs::File::open(entry.path().join("cmdline")) else {
            continue;
        };
        let mut bytes = Vec::new();
        let _ = file.read_to_end(&mut bytes);
        let line = String::from_utf8_lossy(&bytes).replace('\0', " ");
        if line.contains(marker) {
            found.push(format!("{}: {line}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

#[tokio::test]
async fn writes_and_deletes_outside_the_root_are_refused() {
    let Some(f) = Fixture::new("writes") else {
        return;
    };
    let before = f.victim_state();
    let host_home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
    let marker = format!("pi-escape-{}", std::process::id());
    let shm = format!("/dev/shm/{marker}");
    let home_file = format!("{host_home}/.{marker}");
    let victim = f.victim.display().to_string();
    let outside = f.outside.display().to_string();
    // (attempt, the path that must not exist afterwards)
    let attempts: Vec<(String, String)> = vec![
        (format!("echo x > {}", f.o("redirect")), f.o("redirect")),
        (format!("cp /etc/hostname {}", f.o("cp")), f.o("cp")),
        (
            format!("mv {victim} stolen.txt"),
            f.root.join("stolen.txt").display().to_string(),
        ),
        (
            format!("ln -s /etc/passwd {}", f.o("symlink")),
            f.o("symlink"),
        ),
        (
            format!("ln {victim} hard.txt; echo pwned >> hard.txt"),
            f.o("never"),
        ),
        (format!("rm -f {victim}"), f.o("never")),
        (format!("mkdir {}", f.o("dir")), f.o("dir")),
        (format!("mkfifo {}", f.o("fifo")), f.o("fifo")),
        (format!("chmod 777 {victim}"), f.o("never")),
        (format!("touch -d 2020-01-01 {victim}"), f.o("never")),
        (format!("truncate -s 0 {victim}"), f.o("never")),
        (format!("echo pwned >> {victim}"), f.o("never")),
        (format!("sed -i s/victim/pwned/ {victim}"), f.o("never")),
        (format!("exec 3<>{victim}; echo pwned >&3"), f.o("never")),
        (
            format!("python3 -c \"open('{}', 'w').write('x')\"", f.o("python")),
            f.o("python"),
        ),
        (
            format!(
                "perl -e 'open(my $f, \">\", \"{}\") or die \"$!\"'",
                f.o("perl")
            ),
            f.o("perl"),
        ),
        (
            format!("ln -s {outside} escape; echo x > escape/via-link"),
            f.o("via-link"),
        ),
        ("echo x > ../outside/dotdot".to_owned(), f.o("dotdot")),
        (
            format!("echo x > /proc/self/root{}", f.o("proc-root")),
            f.o("proc-root"),
        ),
        (format!("echo x > {shm}"), shm.clone()),
        (format!("echo x > {home_file}"), home_file.clone()),
        (
            format!("dd if=/dev/zero of={} count=1", f.o("dd")),
            f.o("dd"),
        ),
        (format!("tee {} < /dev/null", f.o("tee")), f.o("tee")),
        (
            format!(
                "printf 'int main(void){{return 0;}}' > t.c && cc t.c -o {}",
                f.o("a.out")
            ),
            f.o("a.out"),
        ),
        (format!("git init -q {}", f.o("repo")), f.o("repo")),
        (
            format!("find {outside} -name victim.txt -delete"),
            f.o("never"),
        ),
        (
            format!("unshare -r sh -c 'echo x > {}'", f.o("unshare")),
            f.o("unshare"),
        ),
        (
            format!(
                "unshare -rm sh -c 'mount -o remount,rw / ; mount --bind . {outside}; echo x > {}'",
                f.o("remount")
            ),
            f.o("remount"),
        ),
    ];
    let mut failures = Vec::new();
    for (attempt, must_not_exist) in &attempts {
        let text = f.bash(attempt).await;
        if Path::new(must_not_exist).exists() {
            failures.push(format!("{attempt}: {must_not_exist} exists\n{text}"));
        }
        if f.victim_state() != before {
            failures.push(format!("{attempt}: the victim changed\n{text}"));
        }
    }
    assert!(!f.root.join("stolen.txt").exists());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // One refusal, as the model reads it.
    let text = f.bash(&format!("echo x > {}", f.o("told"))).await;
    assert!(
        text.contains(&format!(
            "the sandbox refused a write outside the project root: {}",
            f.o("told")
        )),
        "{text}"
    );
    let _ = std::fs::remove_file(&shm);
    let _ = std::fs::remove_file(&home_file);
}

#[tokio::test]
async fn background_and_detached_processes_end_with_the_call() {
    let Some(f) = Fixture::new("background") else {
        return;
    };
    let marker = format!("31337.{}", std::process::id());
    let attempts = [
        format!("(sleep 0.3; echo x > {}) &", f.o("background")),
        format!("setsid sh -c 'sleep 0.3; echo x > {}' &", f.o("setsid")),
        "nohup sh -c 'sleep 0.3; echo late > late-nohup.txt' > /dev/null 2>&1 &".to_owned(),
        "setsid sh -c 'sleep 0.3; echo late > late-setsid.txt' &".to_owned(),
        format!("setsid sleep {marker} & disown; echo started"),
        format!("(sleep {marker} &) ; echo started"),
    ];
    for attempt in &attempts {
        f.bash(attempt).await;
    }
    // Longer than any of them would have slept.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(!Path::new(&f.o("background")).exists());
    assert!(!Path::new(&f.o("setsid")).exists());
    assert!(
        !f.root.join("late-nohup.txt").exists(),
        "a process outlived its call"
    );
    assert!(
        !f.root.join("late-setsid.txt").exists(),
        "a process outlived its call"
    );
    let survivors = processes_with(&marker);
    assert!(survivors.is_empty(), "outlived the call: {survivors:?}");
}

#[tokio::test]
async fn the_network_and_unix_sockets_are_closed() {
    let Some(f) = Fixture::new("network") else {
        return;
    };
    let tcp4 = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp4.set_nonblocking(true).unwrap();
    let tcp6 = TcpListener::bind("[::1]:0").unwrap();
    tcp6.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let udp6 = UdpSocket::bind("[::1]:0").unwrap();
    udp6.set_nonblocking(true).unwrap();
    let unix_path = f.outside.join("host.sock");
    let unix = UnixListener::bind(&unix_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    let abstract_name = format!("pi-escape-abstract-{}", std::process::id());
    let abstract_listener = {
        use std::os::linux::net::SocketAddrExt;
        let address = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
        UnixListener::bind_addr(&address).unwrap()
    };
    abstract_listener.set_nonblocking(true).unwrap();
    let p4 = tcp4.local_addr().unwrap().port();
    let p6 = tcp6.local_addr().unwrap().port();
    let u4 = udp.local_addr().unwrap().port();
    let u6 = udp6.local_addr().unwrap().port();
    let py = |code: String| format!("python3 -c \"import socket\n{code}\"");
    let attempts = [
        format!("echo hi > /dev/tcp/127.0.0.1/{p4}"),
        format!("echo hi > /dev/tcp/::1/{p6}"),
        py(format!("socket.create_connection(('127.0.0.1', {p4}), 2)")),
        py(format!("socket.create_connection(('::1', {p6}), 2)")),
        format!("echo hi > /dev/udp/127.0.0.1/{u4}"),
        py(format!(
            "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'hi', ('127.0.0.1', {u4}))"
        )),
        py(format!(
            "socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(b'hi', ('::1', {u6}))"
        )),
        py(format!(
            "s = socket.socket(socket.AF_UNIX)\ns.connect('{}')",
            unix_path.display()
        )),
        py(format!(
            "s = socket.socket(socket.AF_UNIX)\ns.connect(b'\\\\0{abstract_name}')"
        )),
        py(format!(
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\ns.sendto(b'hi', '{}')",
            unix_path.display()
        )),
    ];
    let mut texts = Vec::new();
    for attempt in &attempts {
        texts.push(f.bash(attempt).await);
    }
    let mut buf = [0u8; 16];
    assert!(
        tcp4.accept().is_err(),
        "a TCP (IPv4) connection got through: {texts:?}"
    );
    assert!(
        tcp6.accept().is_err(),
        "a TCP (IPv6) connection got through: {texts:?}"
    );
    assert!(
        udp.recv_from(&mut buf).is_err(),
        "a datagram got through: {texts:?}"
    );
    assert!(
        udp6.recv_from(&mut buf).is_err(),
        "a datagram got through: {texts:?}"
    );
    assert!(
        unix.accept().is_err(),
        "a Unix connection got through: {texts:?}"
    );
    assert!(
        abstract_listener.accept().is_err(),
        "an abstract-socket connection got through: {texts:?}"
    );
    assert!(
        texts[0].contains("the sandbox refused a network connection"),
        "{}",
        texts[0]
    );
    assert!(
        texts[7].contains("the sandbox refused a Unix socket"),
        "{}",
        texts[7]
    );
}

#[tokio::test]
async fn secrets_and_other_processes_are_out_of_reach() {
    let Some(f) = Fixture::new("secrets") else {
        return;
    };
    let mut victim = std::process::Command::new("sleep")
        .arg("60")
        .env("PI_ESCAPE_VICTIM_SECRET", "victim-env-secret-0815")
        .spawn()
        .unwrap();
    let pid = victim.id();
    // cargo sets these for the test process: the host's environment.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let secret = f.o("secret.txt");
    let attempts = [
        format!("cat {secret}"),
        format!("cp {secret} copied.txt; cat copied.txt"),
        format!("python3 -c \"print(open('{secret}').read())\""),
        format!("ln -s {secret} link.txt; cat link.txt"),
        "env; cat /proc/self/environ | tr '\\0' '\\n'".to_owned(),
        format!("cat /proc/{pid}/environ | tr '\\0' '\\n'"),
        format!("cat /proc/{pid}/cmdline; ls /proc/{pid}/"),
        "cat /etc/shadow".to_owned(),
        format!("kill -9 {pid}"),
        "kill -9 -1".to_owned(),
        "pkill -9 sleep; killall -9 sleep".to_owned(),
    ];
    let mut texts = Vec::new();
    for attempt in &attempts {
        texts.push(f.bash(attempt).await);
    }
    let all = texts.join("\n");
    assert!(!all.contains("host-secret-4711"), "{all}");
    assert!(!all.contains("victim-env-secret-0815"), "{all}");
    assert!(!all.contains("CARGO_MANIFEST_DIR"), "{all}");
    assert!(!all.contains(&manifest), "{all}");
    assert!(!all.contains("root:$"), "{all}");
    assert!(
        !f.root.join("copied.txt").exists()
            || std::fs::read_to_string(f.root.join("copied.txt"))
                .unwrap()
                .is_empty()
    );
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the victim was killed: {all}"
    );
    assert!(
        texts[0].contains(&format!(
            "the sandbox refused a read outside the project root and the system directories: {secret}"
        )),
        "{}",
        texts[0]
    );
    assert!(
        texts[8].contains("the sandbox refused a signal"),
        "{}",
        texts[8]
    );
    let _ = victim.kill();
    let _ = victim.wait();
}

#[tokio::test]
async fn everyday_work_inside_the_root_succeeds() {
    let Some(f) = Fixture::new("everyday") else {
        return;
    };
    let cases = [
        (
            "mkdir -p a/b && echo hi > a/b/f && cat a/b/f && mv a/b/f a/g && cp a/g a/h && rm -r a/b && ls a | tr '\\n' ' '",
            "hi\ng h",
        ),
        ("seq 1 100 | sort -rn | head -1", "100"),
        (
            "python3 -c \"import tempfile, os; f = tempfile.NamedTemporaryFile(); open('py.txt', 'w').write('py'); print(open('py.txt').read(), os.cpu_count() > 0)\"",
            "py True",
        ),
        (
            "printf '#include <stdio.h>\\nint main(void){puts(\"built\");return 0;}' > m.c && cc m.c -o m && ./m",
            "built",
        ),
        (
            "git init -q repo && cd repo && git config user.email t@example.com && git config user.name t && echo a > a && git add a && git commit -qm first && git log --oneline | wc -l",
            "1",
        ),
        (
            "echo quiet > /dev/null && echo err > /dev/stderr && chmod +x m && touch -d 2001-01-01 m.c && ln -s m.c link.c && ln m.c hard.c && mkfifo fifo && echo done",
            "err\ndone",
        ),
        (
            "echo $HOME > h.txt && touch ~/x && ls ~ && echo $TMPDIR",
            "x",
        ),
    ];
    for (command, expected) in cases {
        let text = f.bash(command).await;
        assert!(text.contains(expected), "{command}\n---\n{text}");
        assert!(!text.contains("[sandbox]"), "{command}\n---\n{text}");
    }
    assert!(f.root.join("repo/.git").is_dir());
    assert_eq!(
        std::fs::read_to_string(f.root.join("py.txt")).unwrap(),
        "py"
    );
}

#[tokio::test]
async fn the_profiles_limits_end_the_call() {
    use pi_tool_coding::{BashSandbox, CodingOptions, CodingTools};
    let Some(f) = Fixture::new("limits") else {
        return;
    };
    let sandbox = Sandbox::for_root(&f.root)
        .wall_time(Duration::from_millis(500))
        .max_output_bytes(200_000);
    let tools = std::sync::Arc::new(CodingTools::new(
        CodingOptions::default().sandbox(BashSandbox::Profile(sandbox)),
    ));
    let limited = Fixture {
        pack: tools.pack_confined(&f.root),
        base: f.base.join("unused"),
        root: f.root.clone(),
        outside: f.outside.clone(),
        victim: f.victim.clone(),
    };
    let started = std::time::Instant::now();
    let text = limited.bash("sleep 30").await;
    assert!(
        text.contains("Command killed after 0.5 seconds (the sandbox's wall-time limit)"),
        "{text}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let text = limited.bash("yes").await;
    assert!(
        text.contains("Command killed after 200000 bytes of output (the sandbox's output limit)"),
        "{text}"
    );
}
