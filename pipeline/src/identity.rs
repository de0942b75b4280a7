//! The repository's identity for instance ids, statements and `instance.json`: `owner/name`
//! from the `origin` remote URL (https, http, git, ssh and scp-style `git@host:` forms, with
//! user names, ports, `.git` suffixes and trailing slashes), else the folder's name (owner
//! `local`); `--repo-name owner/name` overrides both. A remote that is a local path (a clone
//! of a folder or a mirror) names no public repository and is ignored.

use crate::Result;
use crate::error::bail;

/// `owner/name` as given with `--repo-name`, checked: two non-empty parts (the owner may hold
/// a GitLab group path `group/sub`), no white space.
pub fn parse_repo_name(arg: &str) -> Result<(String, String)> {
    let arg = arg.trim().trim_end_matches('/');
    match arg.rsplit_once('/') {
        Some((owner, name))
            if !owner.is_empty()
                && !name.is_empty()
                && !arg.chars().any(char::is_whitespace)
                && owner.split('/').all(|p| !p.is_empty()) =>
        {
            Ok((owner.to_string(), name.to_string()))
        }
        _ => bail!("--repo-name takes `owner/name` (for example `psf/requests`), not `{arg}`"),
    }
}

/// `(owner, name)` from a git remote URL, or `None` for a local path or an URL without both.
/// The owner is everything between the host and the name (`group/sub` on GitLab).
pub fn owner_name_from_url(url: &str) -> Option<(String, String)> {
    let url = url.trim();
    let path = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || c == '+') {
            return None;
        }
        // `[user[:password]@]host[:port]/path`
        let (authority, path) = rest.split_once('/')?;
        if authority.is_empty() {
            return None;
        }
        path
    } else {
        // scp-style `[user@]host:path`: a colon before any slash; a Windows drive (`C:\`) or a
        // path (`/srv/x.git`, `../x`) is local.
        let colon = url.find(':')?;
        let host = &url[..colon];
        if host.is_empty() || host.contains('/') || host.contains('\\') || host.len() == 1 {
            return None;
        }
        let path = &url[colon + 1..];
        // `host:2222/owner/name` is not scp syntax, but people write it; skip a port.
        match path.split_once('/') {
            Some((port, rest)) if !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()) => rest,
            _ => path,
        }
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).trim_end_matches('/');
    // Hosts that put the repository under a fixed prefix (`~user` on some, `scm/` on
    // Bitbucket Server) keep it in the owner; that is still stable and unique.
    let (owner, name) = path.rsplit_once('/')?;
    let owner = owner.trim_start_matches('~');
    (!owner.is_empty() && !name.is_empty() && owner.split('/').all(|p| !p.is_empty()))
        .then(|| (owner.to_string(), name.to_string()))
}

/// The owner as one path component of an instance id (`group/sub` -> `group-sub`).
pub fn id_component(s: &str) -> String {
    s.chars().map(|c| if c == '/' || c == '\\' || c.is_whitespace() { '-' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(url: &str) -> Option<(String, String)> {
        owner_name_from_url(url)
    }

    fn is(owner: &str, name: &str) -> Option<(String, String)> {
        Some((owner.into(), name.into()))
    }

    #[test]
    fn https_urls_of_common_hosts() {
        assert_eq!(on("https://github.com/psf/requests.git"), is("psf", "requests"));
        assert_eq!(on("https://github.com/psf/requests"), is("psf", "requests"));
        assert_eq!(on("https://github.com/psf/requests/"), is("psf", "requests"));
        assert_eq!(on("https://github.com/psf/requests.git/"), is("psf", "requests"));
        assert_eq!(on("http://codeberg.org/forgejo/forgejo.git"), is("forgejo", "forgejo"));
        assert_eq!(
            on("https://user@bitbucket.org/atlassian/python-bitbucket.git"),
            is("atlassian", "python-bitbucket")
        );
        assert_eq!(on("https://user:token@gitlab.com/group/sub/project.git"), is("group/sub", "project"));
        assert_eq!(on("https://git.example.com:8443/team/tool"), is("team", "tool"));
        assert_eq!(on("git://github.com/pallets/flask.git"), is("pallets", "flask"));
    }

    #[test]
    fn ssh_and_scp_style_urls() {
        assert_eq!(on("git@github.com:psf/requests.git"), is("psf", "requests"));
        assert_eq!(on("git@gitlab.com:group/sub/project.git"), is("group/sub", "project"));
        assert_eq!(on("git@bitbucket.org:owner/name"), is("owner", "name"));
        assert_eq!(on("ssh://git@github.com/psf/requests.git"), is("psf", "requests"));
        assert_eq!(on("ssh://git@codeberg.org:2222/owner/name.git"), is("owner", "name"));
        assert_eq!(on("git+ssh://git@github.com/psf/requests"), is("psf", "requests"));
        assert_eq!(on("git@host.example:2222/owner/name.git"), is("owner", "name"));
    }

    #[test]
    fn local_paths_name_no_repository() {
        // The case of issue 12: a clone of a mirror folder named `<owner>+<name>/repo.git`.
        assert_eq!(on("/work/.mirror/un33k+python-slugify/repo.git"), None);
        assert_eq!(on("file:///work/.mirror/un33k+python-slugify/repo.git"), None);
        assert_eq!(on("../other/checkout"), None);
        assert_eq!(on("C:\\src\\repo"), None);
        assert_eq!(on("https://github.com/"), None);
        assert_eq!(on("https://github.com/justone"), None);
        assert_eq!(on(""), None);
    }

    #[test]
    fn repo_name_argument() {
        assert_eq!(parse_repo_name("psf/requests").unwrap(), ("psf".into(), "requests".into()));
        assert_eq!(parse_repo_name("group/sub/p").unwrap(), ("group/sub".into(), "p".into()));
        for bad in ["requests", "/requests", "psf/", "a b/c", "a//b"] {
            let err = parse_repo_name(bad).unwrap_err().to_string();
            assert!(err.contains("owner/name"), "{bad}: {err}");
        }
        assert_eq!(id_component("group/sub"), "group-sub");
    }
}
