//! pytest plugins the repository's pytest configuration needs: an ini key or an `addopts`
//! option that only a plugin understands (`asyncio_mode` → pytest-asyncio, `--cov` →
//! pytest-cov, `timeout` → pytest-timeout, `-n` → pytest-xdist …) and `required_plugins`.
//! Also the tables of repairs: a fixture, option or marker a run reported unknown.

use std::path::Path;

use super::ini;
use crate::env::Finding;

/// ini keys only a plugin reads.
pub const INI_KEYS: &[(&str, &str)] = &[
    ("asyncio_mode", "pytest-asyncio"),
    ("asyncio_default_fixture_loop_scope", "pytest-asyncio"),
    ("timeout", "pytest-timeout"),
    ("timeout_method", "pytest-timeout"),
    ("timeout_func_only", "pytest-timeout"),
    ("env", "pytest-env"),
    ("DJANGO_SETTINGS_MODULE", "pytest-django"),
    ("django_find_project", "pytest-django"),
    ("mock_use_standalone_module", "pytest-mock"),
    ("trio_mode", "pytest-trio"),
    ("flake8-max-line-length", "pytest-flake8"),
    ("mypy-ini-file", "pytest-mypy"),
    ("httpserver_listen_address", "pytest-httpserver"),
    ("randomly_seed", "pytest-randomly"),
    ("cov_context", "pytest-cov"),
    ("datadir", "pytest-datadir"),
];

/// Command-line options only a plugin adds (a prefix match: `--cov` covers `--cov-report`).
pub const OPTIONS: &[(&str, &str)] = &[
    ("--cov", "pytest-cov"),
    ("--no-cov", "pytest-cov"),
    ("-n", "pytest-xdist"),
    ("--numprocesses", "pytest-xdist"),
    ("--dist", "pytest-xdist"),
    ("--forked", "pytest-forked"),
    ("--timeout", "pytest-timeout"),
    ("--benchmark", "pytest-benchmark"),
    ("--reruns", "pytest-rerunfailures"),
    ("--only-rerun", "pytest-rerunfailures"),
    ("--mypy", "pytest-mypy"),
    ("--ruff", "pytest-ruff"),
    ("--flake8", "pytest-flake8"),
    ("--black", "pytest-black"),
    ("--isort", "pytest-isort"),
    ("--html", "pytest-html"),
    ("--self-contained-html", "pytest-html"),
    ("--hypothesis", "hypothesis"),
    ("--snapshot", "syrupy"),
    ("--randomly", "pytest-randomly"),
    ("-p randomly", "pytest-randomly"),
    ("--instafail", "pytest-instafail"),
    ("--asyncio-mode", "pytest-asyncio"),
    ("--doctest-plus", "pytest-doctestplus"),
    ("--remote-data", "pytest-remotedata"),
    ("--mpl", "pytest-mpl"),
    ("--nbval", "nbval"),
    ("--memray", "pytest-memray"),
    ("--codspeed", "pytest-codspeed"),
    ("--socket", "pytest-socket"),
    ("--disable-socket", "pytest-socket"),
    ("--allow-hosts", "pytest-socket"),
    ("--record-mode", "pytest-recording"),
    ("--block-network", "pytest-recording"),
    ("--ds", "pytest-django"),
    ("--reuse-db", "pytest-django"),
    ("--sugar", "pytest-sugar"),
    ("--emoji", "pytest-emoji"),
    ("--md-report", "pytest-md-report"),
    ("--json-report", "pytest-json-report"),
    ("--cov-fail-under", "pytest-cov"),
];

/// Fixtures only a plugin provides.
pub const FIXTURES: &[(&str, &str)] = &[
    ("mocker", "pytest-mock"),
    ("class_mocker", "pytest-mock"),
    ("module_mocker", "pytest-mock"),
    ("session_mocker", "pytest-mock"),
    ("benchmark", "pytest-benchmark"),
    ("freezer", "pytest-freezer"),
    ("time_machine", "time-machine"),
    ("httpserver", "pytest-httpserver"),
    ("httpx_mock", "pytest-httpx"),
    ("respx_mock", "respx"),
    ("requests_mock", "requests-mock"),
    ("event_loop", "pytest-asyncio"),
    ("unused_tcp_port", "pytest-asyncio"),
    ("aiohttp_client", "pytest-aiohttp"),
    ("snapshot", "syrupy"),
    ("datadir", "pytest-datadir"),
    ("shared_datadir", "pytest-datadir"),
    ("faker", "Faker"),
    ("anyio_backend", "anyio"),
    ("subtests", "pytest-subtests"),
    ("xprocess", "pytest-xprocess"),
    ("lazy_fixture", "pytest-lazy-fixture"),
    ("capsys_binary", "pytest"),
    ("fs", "pyfakefs"),
    ("fake_filesystem", "pyfakefs"),
    ("caplog_handler", "pytest"),
    ("mock_env", "pytest-env"),
    ("monkeypatch_session", "pytest"),
    ("nursery", "pytest-trio"),
    ("autojump_clock", "pytest-trio"),
    ("qtbot", "pytest-qt"),
    ("django_db_setup", "pytest-django"),
    ("rf", "pytest-django"),
    ("settings", "pytest-django"),
    ("db", "pytest-django"),
    ("vcr", "pytest-recording"),
    ("vcr_cassette", "pytest-vcr"),
    ("regtest", "pytest-regtest"),
    ("num_regression", "pytest-regressions"),
    ("data_regression", "pytest-regressions"),
    ("file_regression", "pytest-regressions"),
    ("image_regression", "pytest-regressions"),
    ("socket_disabled", "pytest-socket"),
    ("doctest_namespace", "pytest"),
];

/// Markers only a plugin registers (under `--strict-markers`, an unknown marker is an error).
pub const MARKERS: &[(&str, &str)] = &[
    ("asyncio", "pytest-asyncio"),
    ("timeout", "pytest-timeout"),
    ("benchmark", "pytest-benchmark"),
    ("django_db", "pytest-django"),
    ("freeze_time", "pytest-freezer"),
    ("trio", "pytest-trio"),
    ("anyio", "anyio"),
    ("flaky", "flaky"),
    ("vcr", "pytest-recording"),
    ("httpx_mock", "pytest-httpx"),
    ("respx", "respx"),
    ("mpl_image_compare", "pytest-mpl"),
    ("order", "pytest-order"),
    ("run", "pytest-ordering"),
    ("dependency", "pytest-dependency"),
    ("xdist_group", "pytest-xdist"),
    ("forked", "pytest-forked"),
    ("enable_socket", "pytest-socket"),
    ("lazy_fixture", "pytest-lazy-fixture"),
    ("hypothesis", "hypothesis"),
    ("remote_data", "pytest-remotedata"),
    ("datafiles", "pytest-datafiles"),
    ("subtests", "pytest-subtests"),
    ("repeat", "pytest-repeat"),
    ("skip_on_ci", "pytest-skip-markers"),
];

/// Where pytest's configuration lives, in pytest's own order, and its section.
const CONFIGS: &[(&str, &str)] = &[
    ("pytest.ini", "pytest"),
    ("pyproject.toml", "tool.pytest.ini_options"),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
];

/// The plugins the first pytest configuration found needs, each with its reason and file.
pub fn required(repo: &Path) -> (Vec<Finding>, Option<String>) {
    for (file, section) in CONFIGS {
        let Ok(text) = std::fs::read_to_string(repo.join(file)) else { continue };
        let entries: Vec<(String, String)> = if *file == "pyproject.toml" {
            let Ok(table) = toml::from_str::<toml::Table>(&text) else { continue };
            let Some(opts) = table
                .get("tool")
                .and_then(|t| t.get("pytest"))
                .and_then(|t| t.get("ini_options"))
                .and_then(|t| t.as_table())
            else {
                continue;
            };
            opts.iter()
                .map(|(k, v)| {
                    let v = match v {
                        toml::Value::String(s) => s.clone(),
                        toml::Value::Array(a) => a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(" "),
                        other => other.to_string(),
                    };
                    (k.clone(), v)
                })
                .collect()
        } else {
            let parsed = ini::parse(&text);
            let found = ini::section(&parsed, section);
            if found.is_empty() {
                continue;
            }
            found.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        return (from_entries(&entries, &format!("{file} [{section}]")), Some(file.to_string()));
    }
    (Vec::new(), None)
}

fn from_entries(entries: &[(String, String)], source: &str) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut add = |dist: &str, why: String| {
        if !out.iter().any(|f| f.value == dist) {
            out.push(Finding::new("plugin", dist, why));
        }
    };
    for (key, value) in entries {
        if let Some((_, dist)) = INI_KEYS.iter().find(|(k, _)| k == key) {
            add(dist, format!("{source} {key}"));
        }
        if key == "required_plugins" {
            for p in value.split_whitespace() {
                let name = p.split(['>', '<', '=', '!', '~']).next().unwrap_or(p);
                add(name, format!("{source} required_plugins"));
            }
        }
        if key == "addopts" {
            let words: Vec<&str> = value.split_whitespace().collect();
            for (i, w) in words.iter().enumerate() {
                let pair = words.get(i + 1).map(|n| format!("{w} {n}"));
                let hit = OPTIONS.iter().find(|(opt, _)| {
                    if opt.contains(' ') {
                        pair.as_deref() == Some(*opt)
                    } else if opt.len() == 2 {
                        *w == *opt
                            || (w.starts_with(opt)
                                && w[2..].chars().all(|c| c.is_ascii_digit() || c == '=')
                                && w.len() > 2)
                    } else {
                        w.starts_with(opt)
                    }
                });
                if let Some((opt, dist)) = hit {
                    add(
                        dist,
                        format!(
                            "{source} addopts `{}`",
                            if opt.contains(' ') { opt.to_string() } else { w.to_string() }
                        ),
                    );
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_options_name_their_plugins() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("pyproject.toml"),
            "[tool.pytest.ini_options]\nasyncio_mode = 'auto'\naddopts = '--cov=pkg --cov-report=term -n 2 -ra'\ntimeout = 30\nrequired_plugins = 'pytest-mock>=3'\n",
        )
        .unwrap();
        let (found, file) = required(d.path());
        assert_eq!(file.as_deref(), Some("pyproject.toml"));
        let got: Vec<(&str, &str)> = found.iter().map(|f| (f.value.as_str(), f.source.as_str())).collect();
        assert_eq!(
            got,
            // In key order (the table is read sorted).
            vec![
                ("pytest-cov", "pyproject.toml [tool.pytest.ini_options] addopts `--cov=pkg`"),
                ("pytest-xdist", "pyproject.toml [tool.pytest.ini_options] addopts `-n`"),
                ("pytest-asyncio", "pyproject.toml [tool.pytest.ini_options] asyncio_mode"),
                ("pytest-mock", "pyproject.toml [tool.pytest.ini_options] required_plugins"),
                ("pytest-timeout", "pyproject.toml [tool.pytest.ini_options] timeout"),
            ]
        );
    }

    #[test]
    fn pytest_ini_wins_over_setup_cfg_and_plain_options_need_nothing() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("pytest.ini"), "[pytest]\naddopts = -ra --strict-markers -p no:cacheprovider\n")
            .unwrap();
        std::fs::write(d.path().join("setup.cfg"), "[tool:pytest]\naddopts = --cov\n").unwrap();
        let (found, file) = required(d.path());
        assert_eq!(file.as_deref(), Some("pytest.ini"));
        assert!(found.is_empty(), "{found:?}");
    }
}
