//! Energy per generated token, where the platform exposes a counter.
//!
//! - Linux: RAPL through powercap (`/sys/class/powercap/intel-rapl:N/energy_uj`, package zones
//!   plus their `dram` subzones; AMD CPUs appear there too on recent kernels). The counters wrap
//!   at `max_energy_range_uj`, so a background thread reads them every second and adds the
//!   differences; since the PLATYPUS advisory (2020) the files are readable by root only.
//! - macOS: `powermetrics` (root only) sampling CPU and GPU power every 200 ms; its figures are
//!   the OS's estimates, integrated over time.
//! - Otherwise, or when reading fails: "n/a" with the reason, never 0.
//!
//! Figures are gross (the whole package, idle power included) and cover decoding only.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::clock::{Clock, VirtualClock};

/// A cumulative energy counter.
pub trait EnergyMeter {
    /// Joules since the meter started, or why there is no figure.
    fn read(&mut self) -> Result<f64, String>;
    /// What is measured (e.g. "RAPL package-0 + dram").
    fn source(&self) -> String;
}

/// No counter, with the reason.
pub struct Unavailable(pub String);

impl EnergyMeter for Unavailable {
    fn read(&mut self) -> Result<f64, String> {
        Err(self.0.clone())
    }
    fn source(&self) -> String {
        format!("n/a ({})", self.0)
    }
}

/// The platform's meter, or [`Unavailable`] with the reason.
pub fn detect() -> Box<dyn EnergyMeter> {
    if cfg!(target_os = "linux") {
        match Rapl::open(Path::new("/sys/class/powercap")) {
            Ok(r) => Box::new(r),
            Err(e) => Box::new(Unavailable(e)),
        }
    } else if cfg!(target_os = "macos") {
        match Powermetrics::start() {
            Ok(p) => Box::new(p),
            Err(e) => Box::new(Unavailable(e)),
        }
    } else {
        Box::new(Unavailable(format!("no energy counter known on {}", std::env::consts::OS)))
    }
}

struct Zone {
    name: String,
    energy: PathBuf,
    range: u64,
    last: u64,
}

fn read_u64(p: &Path) -> Result<u64, String> {
    let s = std::fs::read_to_string(p).map_err(|e| {
        if e.kind() == std::io::ErrorKind::PermissionDenied {
            format!("permission denied reading {} (RAPL counters are root-only since 2020: run as root or grant read access with a udev rule)", p.display())
        } else {
            format!("cannot read {}: {e}", p.display())
        }
    })?;
    s.trim().parse().map_err(|_| format!("{} does not hold a number: {:?}", p.display(), s.trim()))
}

/// Difference of a counter that wraps at `range`.
pub fn wrapped_delta(before: u64, after: u64, range: u64) -> u64 {
    if after >= before { after - before } else { after + range.saturating_sub(before) }
}

/// RAPL counters under a powercap root, summed.
pub struct Rapl {
    state: Arc<Mutex<RaplState>>,
    stop: Arc<AtomicBool>,
    names: String,
}

struct RaplState {
    zones: Vec<Zone>,
    micro_joules: u128,
    error: Option<String>,
}

impl RaplState {
    fn sample(&mut self) {
        for z in &mut self.zones {
            match read_u64(&z.energy) {
                Ok(v) => {
                    self.micro_joules += wrapped_delta(z.last, v, z.range) as u128;
                    z.last = v;
                }
                Err(e) => self.error = Some(e),
            }
        }
    }
}

impl Rapl {
    /// Package zones (`intel-rapl:N`) and their `dram` subzones under `root`.
    pub fn open(root: &Path) -> Result<Rapl, String> {
        let entries =
            std::fs::read_dir(root).map_err(|e| format!("no powercap interface at {} ({e})", root.display()))?;
        let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        dirs.sort();
        let mut zones = Vec::new();
        for d in dirs {
            let Some(base) = d.file_name().and_then(|n| n.to_str()) else { continue };
            let Some(rest) = base.strip_prefix("intel-rapl:") else { continue };
            let name = std::fs::read_to_string(d.join("name")).unwrap_or_default().trim().to_string();
            let top = !rest.contains(':');
            if !(top || name == "dram") {
                continue; // core/uncore are inside the package figure
            }
            let energy = d.join("energy_uj");
            let last = read_u64(&energy)?;
            let range = read_u64(&d.join("max_energy_range_uj")).unwrap_or(u64::MAX);
            zones.push(Zone { name, energy, range, last });
        }
        if zones.is_empty() {
            return Err(format!("no RAPL zone under {}", root.display()));
        }
        let names = zones.iter().map(|z| z.name.as_str()).collect::<Vec<_>>().join(" + ");
        let state = Arc::new(Mutex::new(RaplState { zones, micro_joules: 0, error: None }));
        let stop = Arc::new(AtomicBool::new(false));
        let (s2, stop2) = (state.clone(), stop.clone());
        // Sampling every second keeps at most one wrap between reads even for 32-bit counters.
        std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_secs(1));
                if let Ok(mut s) = s2.lock() {
                    s.sample();
                }
            }
        });
        Ok(Rapl { state, stop, names })
    }
}

impl Drop for Rapl {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl EnergyMeter for Rapl {
    fn read(&mut self) -> Result<f64, String> {
        let mut s = self.state.lock().map_err(|_| "RAPL sampler failed".to_string())?;
        s.sample();
        if let Some(e) = s.error.take() {
            return Err(e);
        }
        Ok(s.micro_joules as f64 * 1e-6)
    }
    fn source(&self) -> String {
        format!("RAPL {} (gross)", self.names)
    }
}

/// macOS `powermetrics`, integrated.
pub struct Powermetrics {
    child: Child,
    state: Arc<Mutex<(f64, Option<String>)>>,
}

impl Powermetrics {
    pub fn start() -> Result<Powermetrics, String> {
        let mut child = Command::new("powermetrics")
            .args(["--samplers", "cpu_power,gpu_power", "-i", "200"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run powermetrics: {e}"))?;
        std::thread::sleep(Duration::from_millis(300));
        if let Ok(Some(status)) = child.try_wait() {
            let mut msg = String::new();
            if let Some(err) = child.stderr.take() {
                let _ = BufReader::new(err).read_line(&mut msg);
            }
            return Err(format!("powermetrics exited ({status}): {} (it needs root: run with sudo)", msg.trim()));
        }
        let state = Arc::new(Mutex::new((0.0, None)));
        let out = child.stdout.take().ok_or("powermetrics has no output")?;
        let s2 = state.clone();
        std::thread::spawn(move || {
            let mut parser = PowermetricsParser::default();
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if let (Some(j), Ok(mut s)) = (parser.line(&line), s2.lock()) {
                    s.0 += j;
                }
            }
        });
        Ok(Powermetrics { child, state })
    }
}

impl Drop for Powermetrics {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl EnergyMeter for Powermetrics {
    fn read(&mut self) -> Result<f64, String> {
        let s = self.state.lock().map_err(|_| "powermetrics reader failed".to_string())?;
        match &s.1 {
            Some(e) => Err(e.clone()),
            None => Ok(s.0),
        }
    }
    fn source(&self) -> String {
        "powermetrics CPU+GPU estimate, 200 ms samples (gross)".into()
    }
}

/// Turns `powermetrics` text into joules: a sample's header gives its length; its mean power is
/// the combined CPU+GPU+ANE line, else CPU plus GPU. A sample is complete when the next header
/// arrives (or at [`PowermetricsParser::finish`]).
#[derive(Default)]
pub struct PowermetricsParser {
    elapsed_s: Option<f64>,
    combined_mw: Option<f64>,
    parts_mw: Option<f64>,
}

impl PowermetricsParser {
    /// Joules of the sample this line closes, if it closes one.
    pub fn line(&mut self, line: &str) -> Option<f64> {
        let l = line.trim();
        if l.starts_with("*** Sampled system activity") {
            let done = self.finish();
            // "... (200.37ms elapsed) ***"
            self.elapsed_s = l
                .rsplit_once("ms elapsed")
                .and_then(|(head, _)| head.rsplit_once('('))
                .and_then(|(_, ms)| ms.trim().parse::<f64>().ok())
                .map(|ms| ms / 1000.0);
            return done;
        }
        let mw = |rest: &str| rest.trim().strip_suffix("mW").and_then(|v| v.trim().parse::<f64>().ok());
        if let Some(v) = l.strip_prefix("Combined Power (CPU + GPU + ANE):").and_then(mw) {
            self.combined_mw = Some(v);
        } else if let Some(v) = l.strip_prefix("CPU Power:").or_else(|| l.strip_prefix("GPU Power:")).and_then(mw) {
            self.parts_mw = Some(self.parts_mw.unwrap_or(0.0) + v);
        }
        None
    }

    /// Joules of the sample in progress, if it has a length and a power.
    pub fn finish(&mut self) -> Option<f64> {
        let dt = self.elapsed_s.take();
        let p = self.combined_mw.take().or(self.parts_mw.take());
        self.parts_mw = None;
        Some(p? / 1000.0 * dt?)
    }
}

/// A made-up constant power over a virtual clock (mock runs).
pub struct VirtualEnergy {
    pub clock: VirtualClock,
    pub watts: f64,
}

impl EnergyMeter for VirtualEnergy {
    fn read(&mut self) -> Result<f64, String> {
        Ok(self.clock.now() * self.watts)
    }
    fn source(&self) -> String {
        format!("virtual {} W (mock)", self.watts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_counters_count_across_the_wrap() {
        assert_eq!(wrapped_delta(10, 30, 100), 20);
        assert_eq!(wrapped_delta(90, 5, 100), 15);
    }

    fn zone(dir: &Path, name: &str, label: &str, uj: u64, range: u64) {
        let z = dir.join(name);
        std::fs::create_dir_all(&z).unwrap();
        std::fs::write(z.join("name"), format!("{label}\n")).unwrap();
        std::fs::write(z.join("energy_uj"), format!("{uj}\n")).unwrap();
        std::fs::write(z.join("max_energy_range_uj"), format!("{range}\n")).unwrap();
    }

    #[test]
    fn rapl_sums_packages_and_dram_and_handles_wraps() {
        let d = tempfile::tempdir().unwrap();
        zone(d.path(), "intel-rapl:0", "package-0", 1_000_000, 10_000_000);
        zone(d.path(), "intel-rapl:0:0", "core", 500, 10_000_000);
        zone(d.path(), "intel-rapl:0:1", "dram", 2_000_000, 10_000_000);
        let mut r = Rapl::open(d.path()).unwrap();
        assert_eq!(r.source(), "RAPL package-0 + dram (gross)");
        assert_eq!(r.read().unwrap(), 0.0);
        // package +1.5 J, wrapping; dram +0.5 J; core ignored.
        std::fs::write(d.path().join("intel-rapl:0/energy_uj"), "500000").unwrap();
        std::fs::write(d.path().join("intel-rapl:0:1/energy_uj"), "2500000").unwrap();
        std::fs::write(d.path().join("intel-rapl:0:0/energy_uj"), "99999999").unwrap();
        let j = r.read().unwrap();
        assert!((j - 10.0).abs() < 1e-9, "{j}");
    }

    #[test]
    fn rapl_reports_why_it_is_unavailable() {
        let d = tempfile::tempdir().unwrap();
        assert!(Rapl::open(&d.path().join("missing")).err().unwrap().contains("no powercap interface"));
        assert!(Rapl::open(d.path()).err().unwrap().contains("no RAPL zone"));
        zone(d.path(), "intel-rapl:0", "package-0", 1, 10);
        std::fs::write(d.path().join("intel-rapl:0/energy_uj"), "garbage").unwrap();
        assert!(Rapl::open(d.path()).err().unwrap().contains("does not hold a number"));
        let mut u = Unavailable("no RAPL zone".into());
        assert_eq!(u.source(), "n/a (no RAPL zone)");
        assert!(u.read().is_err());
    }

    #[test]
    fn powermetrics_samples_integrate_to_joules() {
        let mut p = PowermetricsParser::default();
        let text = "*** Sampled system activity (Wed Nov 29 10:00:00 2026 +0100) (200.00ms elapsed) ***\n\
                    CPU Power: 5000 mW\nGPU Power: 100 mW\nCombined Power (CPU + GPU + ANE): 6000 mW\n\
                    *** Sampled system activity (Wed Nov 29 10:00:00 2026 +0100) (100.00ms elapsed) ***\n\
                    CPU Power: 1500 mW\nGPU Power: 500 mW\n";
        let mut j: Vec<f64> = text.lines().filter_map(|l| p.line(l)).collect();
        j.extend(p.finish());
        assert_eq!(j.len(), 2, "{j:?}");
        assert!((j[0] - 1.2).abs() < 1e-12, "combined power wins: {j:?}");
        assert!((j[1] - 0.2).abs() < 1e-12, "else CPU + GPU: {j:?}");
        assert_eq!(p.finish(), None);
    }
}
