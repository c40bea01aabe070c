//! The tool-surface digest timed alone, for bench/surface.sh (issue 39): canonical JSON and
//! SHA-256 of a `tools/list` answer, the work mcp-deploy adds to every handshake.
//!
//!   cargo bench --bench surface_digest -- TOOLS.json [ITERATIONS]
//!
//! TOOLS.json is a `tools/list` result (`{"tools": [...]}`) or the array itself. Prints one
//! line: the tool count, the canonical size, and the median, min and max microseconds of one
//! digest over ITERATIONS (default 200) runs, after 10 not counted.

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let (Some(path), iterations) = (args.next(), args.next()) else {
        eprintln!("usage: surface_digest TOOLS.json [ITERATIONS]");
        std::process::exit(2);
    };
    let iterations: usize = iterations.map_or(200, |n| n.parse().expect("ITERATIONS"));
    let text = std::fs::read_to_string(&path).expect("TOOLS.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("TOOLS.json is JSON");
    let tools = match v {
        serde_json::Value::Array(a) => a,
        other => other["tools"].as_array().expect("a tools array").clone(),
    };
    let size = serde_json::to_string(&tools).unwrap().len();
    for _ in 0..10 {
        std::hint::black_box(mcp_deploy::surface_digest(&tools));
    }
    let mut times: Vec<f64> = (0..iterations)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(mcp_deploy::surface_digest(std::hint::black_box(&tools)));
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "{} tools, {size} bytes: digest median {:.1} us (min {:.1}, max {:.1}) over {iterations} runs",
        tools.len(),
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
}
