//! The proxy's configuration file as `ringd sync` keeps it: replaced only
//! whole (a temporary file in the same directory, synced, then renamed
//! over it), so the proxy, a crash or a SIGKILL never finds half a file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::placement::Fingerprint;

/// The file and the temporary file it is written through.
#[derive(Debug)]
pub(super) struct ProxyFile {
    path: PathBuf,
    temporary: PathBuf,
    directory: PathBuf,
}

impl ProxyFile {
    /// The file at `path`, whose directory must exist: creating it would
    /// hide a typo until the proxy fails to find its include.
    pub(super) fn new(path: &Path) -> Result<Self, String> {
        let name = path
            .file_name()
            .ok_or_else(|| format!("--out {} names no file", path.display()))?;
        let directory = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !directory.is_dir() {
            return Err(format!(
                "--out {}: the directory {} does not exist",
                path.display(),
                directory.display()
            ));
        }
        if path.is_dir() {
            return Err(format!("--out {} is a directory", path.display()));
        }
        let mut temporary = name.to_os_string();
        temporary.push(".ringd-sync.tmp");
        let temporary = directory.join(format!(".{}", temporary.to_string_lossy()));
        Ok(Self {
            path: path.to_path_buf(),
            temporary,
            directory,
        })
    }

    /// The path written.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's bytes; `None` when there is no file.
    pub(super) fn read(&self) -> io::Result<Option<Vec<u8>>> {
        match fs::read(&self.path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Replaces the file with `bytes`: written and synced under the
    /// temporary name, renamed over the file, and the directory synced so
    /// the rename survives a crash. The file keeps its permissions.
    pub(super) fn replace(&self, bytes: &[u8]) -> io::Result<()> {
        let mut tmp = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&self.temporary)?;
        if let Ok(meta) = fs::metadata(&self.path) {
            tmp.set_permissions(meta.permissions())?;
        }
        tmp.write_all(bytes)?;
        tmp.sync_all()?;
        drop(tmp);
        fs::rename(&self.temporary, &self.path)?;
        File::open(&self.directory)?.sync_all()
    }

    /// Puts back what [`ProxyFile::read`] returned before a failed
    /// attempt: the old bytes, or no file at all.
    pub(super) fn restore(&self, previous: Option<&[u8]>) -> io::Result<()> {
        match previous {
            Some(bytes) => self.replace(bytes),
            None => match fs::remove_file(&self.path) {
                Ok(()) => File::open(&self.directory)?.sync_all(),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e),
            },
        }
    }

    /// Removes a temporary file an agent killed mid-write left behind.
    pub(super) fn clean(&self) {
        let _ = fs::remove_file(&self.temporary);
    }
}

/// The version and fingerprint a file rendered by ringd names in its
/// first line (`# ringd ring R version V fingerprint F (format)`), if it
/// is a file of `ring` in `format`.
pub(super) fn rendered_version(
    bytes: &[u8],
    ring: &str,
    format: &str,
) -> Option<(u64, Fingerprint)> {
    let first = bytes.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(first).ok()?;
    let words: Vec<&str> = line.split(' ').collect();
    match words.as_slice() {
        ["#", "ringd", "ring", r, "version", v, "fingerprint", f, fmt]
            if *r == ring && *fmt == format!("({format})") =>
        {
            Some((v.parse().ok()?, f.parse().ok()?))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacing_keeps_permissions_and_leaves_no_temporary_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("upstream.conf");
        let file = ProxyFile::new(&path).unwrap();
        assert_eq!(file.read().unwrap(), None);
        file.replace(b"one\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        file.replace(b"two\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two\n");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["upstream.conf"]);
        file.restore(Some(b"one\n")).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"one\n");
        file.restore(None).unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn the_directory_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let err = ProxyFile::new(&dir.path().join("missing/upstream.conf")).unwrap_err();
        assert!(err.contains("does not exist"), "{err}");
        let err = ProxyFile::new(dir.path()).unwrap_err();
        assert!(err.contains("is a directory"), "{err}");
    }

    #[test]
    fn the_first_line_names_the_version() {
        let fp = "ab".repeat(32);
        let text =
            format!("# ringd ring cache version 7 fingerprint {fp} (nginx)\nupstream cache {{\n");
        let (v, f) = rendered_version(text.as_bytes(), "cache", "nginx").unwrap();
        assert_eq!((v, f.to_string()), (7, fp.clone()));
        assert_eq!(rendered_version(text.as_bytes(), "other", "nginx"), None);
        assert_eq!(rendered_version(text.as_bytes(), "cache", "haproxy"), None);
        assert_eq!(
            rendered_version(b"upstream cache {\n", "cache", "nginx"),
            None
        );
        let bad = format!("# ringd ring cache version x fingerprint {fp} (nginx)\n");
        assert_eq!(rendered_version(bad.as_bytes(), "cache", "nginx"), None);
    }
}
