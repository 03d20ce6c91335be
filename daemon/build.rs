//! Compiles the C XDP programs in `ebpf/` with clang into `OUT_DIR`, where the daemon embeds
//! them with `include_bytes_aligned!`. The object is part of the binary: nothing to install.

use std::env;
use std::path::PathBuf;
use std::process::Command;

const PROGRAMS: &[&str] = &["classifier", "bench_redirect", "bench_sink", "bench_generator", "endpoint"];

fn main() {
    let ebpf_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../ebpf");
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    // Debian keeps <asm/types.h> under the multiarch directory.
    let multiarch = match env::var("CARGO_CFG_TARGET_ARCH").unwrap().as_str() {
        "x86_64" => "x86_64-linux-gnu",
        "aarch64" => "aarch64-linux-gnu",
        other => panic!("no eBPF include path known for target arch {other}"),
    };
    println!("cargo:rerun-if-changed={}", ebpf_dir.display());
    for name in PROGRAMS {
        let source = ebpf_dir.join(format!("{name}.c"));
        let object = out_dir.join(format!("{name}.o"));
        let status = Command::new(env::var("CLANG").unwrap_or_else(|_| "clang".into()))
            .args(["-O2", "-g", "-Wall", "-Werror", "-target", "bpf"])
            .arg(format!("-I/usr/include/{multiarch}"))
            .arg("-c")
            .arg(&source)
            .arg("-o")
            .arg(&object)
            .status()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run clang to build {}: {e}; run scripts/setup.sh (installs clang and libbpf-dev)",
                    source.display()
                )
            });
        assert!(status.success(), "clang failed on {} (see its messages above)", source.display());
    }
}
