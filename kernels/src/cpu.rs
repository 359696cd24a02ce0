//! What this CPU and OS can run, read once. `dispatch` turns it into kernel tables.

use std::sync::OnceLock;

/// Instruction-set features the kernels use, each with OS support checked.
#[derive(Clone, Debug)]
pub(crate) struct Caps {
    /// The vendor string is "AuthenticAMD" (MKL takes its Zen code paths there).
    pub amd: bool,
    pub avx2: bool,
    pub avx512bw: bool,
    pub avx_vnni: bool,
    pub avx512_vnni: bool,
    /// AMX-TILE + AMX-INT8 usable, or why not.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub amx: Result<(), String>,
    #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
    pub dotprod: bool,
    #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
    pub i8mm: bool,
}

pub(crate) fn caps() -> &'static Caps {
    static CAPS: OnceLock<Caps> = OnceLock::new();
    CAPS.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Caps {
    use std::arch::is_x86_feature_detected as has;
    // The standard macro checks XCR0 too, so these are usable, not merely present.
    let avx2 = has!("avx2") && has!("fma");
    let avx512bw = avx2 && has!("avx512f") && has!("avx512bw");
    let vendor = std::arch::x86_64::__cpuid(0);
    let word = |b: &[u8; 4]| u32::from_le_bytes(*b);
    Caps {
        amd: (vendor.ebx, vendor.edx, vendor.ecx) == (word(b"Auth"), word(b"enti"), word(b"cAMD")),
        avx2,
        avx512bw,
        avx_vnni: avx2 && has!("avxvnni"),
        avx512_vnni: avx512bw && has!("avx512vnni"),
        amx: if avx512bw && has!("avx512vnni") { amx::usable() } else { Err("the CPU lacks AVX-512 VNNI".into()) },
        dotprod: false,
        i8mm: false,
    }
}

#[cfg(target_arch = "aarch64")]
fn detect() -> Caps {
    use std::arch::is_aarch64_feature_detected as has;
    Caps {
        dotprod: has!("dotprod"),
        i8mm: has!("dotprod") && has!("i8mm"),
        amx: Err("not an x86-64 build".into()),
        ..Caps::empty()
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn detect() -> Caps {
    Caps::empty()
}

impl Caps {
    #[allow(dead_code)]
    fn empty() -> Caps {
        Caps {
            amd: false,
            avx2: false,
            avx512bw: false,
            avx_vnni: false,
            avx512_vnni: false,
            amx: Err("not an x86-64 build".into()),
            dotprod: false,
            i8mm: false,
        }
    }
}

/// AMX needs three yeses: CPUID (AMX-TILE, AMX-INT8), the OS enabling tile state in XCR0, and on
/// Linux a per-process permission for the 8 KB of tile data (`arch_prctl`), which the kernel
/// refuses to hand out until asked.
#[cfg(target_arch = "x86_64")]
mod amx {
    use std::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};

    pub fn usable() -> Result<(), String> {
        if __cpuid(0).eax < 7 {
            return Err("the CPU reports no AMX (CPUID leaf 7 missing)".into());
        }
        let edx = __cpuid_count(7, 0).edx;
        let (tile, int8) = (edx >> 24 & 1 == 1, edx >> 25 & 1 == 1);
        if !(tile && int8) {
            return Err("the CPU lacks AMX-TILE/AMX-INT8".into());
        }
        if __cpuid(1).ecx >> 27 & 1 == 0 {
            return Err("the OS has not enabled XSAVE (OSXSAVE is clear)".into());
        }
        // SAFETY: OSXSAVE is set, so XGETBV is available and XCR0 readable.
        let xcr0 = unsafe { xcr0() };
        if xcr0 >> 17 & 3 != 3 {
            return Err(format!("the OS has not enabled AMX tile state (XCR0 = {xcr0:#x}, bits 17 and 18)"));
        }
        permission()
    }

    /// # Safety
    /// The CPU supports XGETBV (CPUID.1:ECX.OSXSAVE).
    #[target_feature(enable = "xsave")]
    unsafe fn xcr0() -> u64 {
        // SAFETY: the caller checked OSXSAVE.
        unsafe { _xgetbv(0) }
    }

    #[cfg(target_os = "linux")]
    fn permission() -> Result<(), String> {
        const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
        const XFEATURE_XTILEDATA: libc::c_long = 18;
        // SAFETY: arch_prctl with these arguments only changes this process's permission set;
        // it reads and writes no memory of ours.
        let r = unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) };
        if r == 0 {
            Ok(())
        } else {
            Err(format!(
                "Linux refused AMX tile data to this process (arch_prctl ARCH_REQ_XCOMP_PERM: {}; needs Linux 5.16 or later)",
                std::io::Error::last_os_error()
            ))
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn permission() -> Result<(), String> {
        Err("AMX tile permission is only requested on Linux".into())
    }
}
