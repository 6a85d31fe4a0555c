//! `fluid presets` and `fluid info`: what the program ships and what it finds.

use super::*;

pub(crate) fn presets() {
    for (name, _) in swirly::scene::PRESETS {
        let desc = Scene::preset(name).map(|s| s.description).unwrap_or_else(|e| format!("(broken: {e})"));
        println!("{name:<14} {desc}");
    }
}

pub(crate) fn info() {
    println!("backends in this build:");
    cpu_line();
    println!("  wgpu    {}", if cfg!(feature = "wgpu") { "yes" } else { "no (build with --features wgpu)" });
    println!("  vulkan  {}", if cfg!(feature = "vulkan") { "yes (ash)" } else { "no (build with --features vulkan)" });
    wgpu_adapters();
    vulkan_devices();
    if cfg!(any(feature = "wgpu", feature = "vulkan")) {
        println!("GPU waits: {}", gpu_waits());
    }
}

/// How the GPU backends wait for the device ([`swirly::wait`]), as `fluid info` says it.
pub(crate) fn gpu_waits() -> String {
    use swirly::wait;
    match wait::spin_from_env() {
        Err(e) => e.to_string(),
        Ok(Some(spin)) if spin.is_zero() => format!("block at once ({}=0)", wait::SPIN_ENV),
        Ok(Some(spin)) => format!("poll for up to {} us, then block ({})", spin.as_micros(), wait::SPIN_ENV),
        Ok(None) => format!(
            "poll for up to {} us, then block; on a CPU device block at once ({} sets it)",
            wait::DEFAULT_SPIN.as_micros(),
            wait::SPIN_ENV
        ),
    }
}

#[cfg(feature = "cpu")]
pub(crate) fn cpu_line() {
    println!("  cpu     yes (rayon; kernels run as {})", swirly_cpu::simd::instruction_set());
}

#[cfg(not(feature = "cpu"))]
pub(crate) fn cpu_line() {
    println!("  cpu     no (build with --features cpu)");
}

/// How a device runs fields in f16 storage, as `fluid info` says it (the GPU crates share
/// the type).
#[cfg(any(feature = "vulkan", feature = "wgpu"))]
fn half_name(h: HalfStorage) -> &'static str {
    match h {
        HalfStorage::Native => "native",
        HalfStorage::Packed => "packed",
    }
}

#[cfg(feature = "vulkan")]
use swirly_vulkan::HalfStorage;
#[cfg(all(feature = "wgpu", not(feature = "vulkan")))]
use swirly_wgpu::HalfStorage;

#[cfg(feature = "vulkan")]
pub(crate) fn vulkan_devices() {
    match swirly_vulkan::physical_devices() {
        Err(e) => println!("Vulkan physical devices: none ({e})"),
        Ok(devices) if devices.is_empty() => println!("Vulkan physical devices: none"),
        Ok(devices) => {
            println!("Vulkan physical devices:");
            println!(
                "  {:<40} {:<14} {:<9} {:<10} {:<18} {:<7} queue family used",
                "name", "type", "API", "timestamps", "timestamp period", "f16"
            );
            for d in devices {
                let queue = match d.queue_family {
                    None => "none with compute".to_string(),
                    Some(f) if d.dedicated_compute => format!("{f} (compute only)"),
                    Some(f) => format!("{f} (graphics, compute)"),
                };
                println!(
                    "  {:<40} {:<14} {:<9} {:<10} {:<18} {:<7} {queue}",
                    d.name,
                    d.device_type,
                    d.api_version,
                    if d.timestamps { "yes" } else { "no" },
                    format!("{} ns", d.timestamp_period_ns),
                    half_name(d.half),
                );
            }
        }
    }
}

#[cfg(not(feature = "vulkan"))]
pub(crate) fn vulkan_devices() {}

#[cfg(feature = "wgpu")]
pub(crate) fn wgpu_adapters() {
    let adapters = swirly_wgpu::adapters();
    if adapters.is_empty() {
        println!("wgpu adapters: none (install a Vulkan driver, e.g. apt-get install mesa-vulkan-drivers libvulkan1)");
        return;
    }
    println!("wgpu adapters:");
    println!("  {:<40} {:<8} {:<14} {:<10} {:<7} driver", "name", "backend", "type", "timestamps", "f16");
    for a in adapters {
        println!(
            "  {:<40} {:<8} {:<14} {:<10} {:<7} {}",
            a.name,
            a.backend,
            a.device_type,
            if a.timestamps { "yes" } else { "no" },
            half_name(a.half),
            a.driver
        );
    }
}

#[cfg(not(feature = "wgpu"))]
pub(crate) fn wgpu_adapters() {}
