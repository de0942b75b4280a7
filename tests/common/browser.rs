//! Pages in a browser: headless Chromium renders a page carve wrote.

use std::path::Path;
use std::process::Command;

/// Open `page` in headless Chromium: every selector matches an element that has a size,
/// the console shows no error, and a screenshot is saved to `shot`.
pub fn browser_check(page: &Path, selectors: &[&str], shot: &Path) {
    // The tests that call this need `chromium` (scripts/setup installs it).
    let chromium = "chromium";
    let profile = tempfile::tempdir().unwrap();
    // A probe page loads the report in an iframe-free way: the report itself plus a script
    // appended in a copy that records what renders into the document title.
    let html = std::fs::read_to_string(page).unwrap();
    let checks: Vec<String> = selectors
        .iter()
        .map(|s| format!("(function(){{var e=document.querySelector({s:?});if(!e)return {s:?}+' missing';var r=e.getBoundingClientRect();return r.width>0&&r.height>0?'':{s:?}+' empty';}})()"))
        .collect();
    let probe = format!(
        "<script>window.addEventListener('load',function(){{var p=[{}].filter(function(x){{return x}});document.body.setAttribute('data-check',p.length?p.join('; '):'ok');var d=document.createElement('pre');d.id='carve-check';d.textContent='CHECK:'+(p.length?p.join('; '):'ok');document.body.appendChild(d);}});</script>",
        checks.join(",")
    );
    let probed = page.with_extension("probe.html");
    std::fs::write(&probed, html.replace("</body>", &format!("{probe}</body>"))).unwrap();
    let base = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ];
    let user = format!("--user-data-dir={}", profile.path().display());
    let url = format!("file://{}", probed.display());
    let dom = Command::new(chromium)
        .args(base)
        .arg(&user)
        .args(["--enable-logging=stderr", "--v=0", "--dump-dom"])
        .arg(&url)
        .output()
        .unwrap();
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom_text.contains("CHECK:ok"),
        "page {} did not render as expected: {}",
        page.display(),
        dom_text.lines().find(|l| l.contains("CHECK:")).unwrap_or("no check ran")
    );
    let console = String::from_utf8_lossy(&dom.stderr);
    // The pages write nothing to the console: any console line (an error, an uncaught
    // exception, a warning) is a failure.
    let errors: Vec<&str> = console.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(errors.is_empty(), "console errors on {}:\n{}", page.display(), errors.join("\n"));
    let shot_arg = format!("--screenshot={}", shot.display());
    let s = Command::new(chromium)
        .args(base)
        .arg(&user)
        .args(["--window-size=1100,1400", &shot_arg])
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        shot.is_file() && std::fs::metadata(shot).unwrap().len() > 10_000,
        "no screenshot: {}",
        String::from_utf8_lossy(&s.stderr)
    );
    if let Ok(dir) = std::env::var("CARVE_SCREENSHOTS") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(shot, Path::new(&dir).join(shot.file_name().unwrap())).unwrap();
    }
}
