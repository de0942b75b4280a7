//! carve-core's OCI runtime from the command line, for `bench/oci.py` and for trying it by
//! hand: one JSON line per call, with the time the library call took.
//!
//!   cargo run -p carve-core --example oci -- build CONTEXT DOCKERFILE TAG
//!   cargo run -p carve-core --example oci -- run IMAGE [--in HOST:CTR]... [--out CTR:HOST]... [--workdir DIR] -- CMD...
//!   cargo run -p carve-core --example oci -- detect

use std::time::{Duration, Instant};

use carve_core::oci::{BuildSpec, Engine, OciError, RunSpec};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(message) = dispatch(&args) {
        eprintln!("oci: {message}");
        std::process::exit(2);
    }
}

fn dispatch(args: &[String]) -> Result<(), String> {
    let start = Instant::now();
    let engine = Engine::detect().map_err(|e| e.to_string())?;
    let detect_s = start.elapsed().as_secs_f64();
    match args.first().map(String::as_str) {
        Some("detect") => {
            println!(r#"{{"engine":"{}","version":"{}","detect_s":{detect_s:.3}}}"#, engine.kind(), engine.version());
            Ok(())
        }
        Some("build") => {
            let [_, ctx, dockerfile, tag] = args else { return Err("usage: build CONTEXT DOCKERFILE TAG".into()) };
            let start = Instant::now();
            let info = engine.build(&BuildSpec::new(ctx, dockerfile, tag)).map_err(|e: OciError| e.to_string())?;
            let build_s = start.elapsed().as_secs_f64();
            println!(
                r#"{{"engine":"{}","tag":"{}","id":"{}","size_bytes":{},"build_s":{build_s:.3}}}"#,
                engine.kind(),
                info.tag,
                info.id,
                info.size_bytes
            );
            Ok(())
        }
        Some("run") => run(&engine, &args[1..]),
        _ => {
            Err("usage: detect | build CONTEXT DOCKERFILE TAG | run IMAGE [--in H:C] [--out C:H] [--workdir D] -- CMD"
                .into())
        }
    }
}

fn run(engine: &Engine, args: &[String]) -> Result<(), String> {
    let image = args.first().ok_or("run: name the image")?;
    let mut spec = RunSpec::new(Duration::from_secs(1800));
    let mut rest = args[1..].iter();
    while let Some(arg) = rest.next() {
        let mut value = || rest.next().cloned().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--in" => {
                let v = value()?;
                let (host, ctr) = v.split_once(':').ok_or("--in HOST:CTR")?;
                spec.copy_in.push((host.into(), ctr.into()));
            }
            "--out" => {
                let v = value()?;
                let (ctr, host) = v.split_once(':').ok_or("--out CTR:HOST")?;
                spec.copy_out.push((ctr.into(), host.into()));
            }
            "--workdir" => spec.workdir = Some(value()?),
            "--" => {
                spec.command = rest.by_ref().cloned().collect();
                break;
            }
            other => return Err(format!("run: unknown option {other}")),
        }
    }
    let start = Instant::now();
    let out = engine.run(image, &spec).map_err(|e| e.to_string())?;
    let run_s = start.elapsed().as_secs_f64();
    println!(
        r#"{{"engine":"{}","exit_code":{},"timed_out":{},"command_s":{:.3},"run_s":{run_s:.3},"copied_out":{},"missing_out":{}}}"#,
        engine.kind(),
        out.exit_code.map_or("null".to_string(), |c| c.to_string()),
        out.timed_out,
        out.duration.as_secs_f64(),
        out.copied_out.len(),
        out.missing_out.len()
    );
    if !out.success() {
        eprint!("{}", out.stderr);
    }
    Ok(())
}
