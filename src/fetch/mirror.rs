//! `reseam fetch --mirror DIR`: a folder with the server's layout, for machines without internet.
//! Records are copied as received (filter expressions included, so each client still decides as
//! Firefox would), attachments stay compressed and are checked before they are kept, and
//! mirroring more languages later adds to the same folder.

use std::fs;
use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use super::error::FetchError;
use super::install::{Ctx, decompress_into, download_attachment, hash_file};
use super::progress::human_bytes;
use super::records::PairModels;
use super::source::{MIRROR_ATTACHMENTS, RECORDS_PATH, mirror_attachment_path};

/// What a mirror run did.
#[derive(Debug, Clone, Default)]
pub struct Mirrored {
    pub pairs: usize,
    pub downloaded: usize,
    pub kept: usize,
    pub bytes: u64,
}

pub fn write_mirror(ctx: &Ctx, dir: &Path, pairs: &[&PairModels]) -> Result<Mirrored, FetchError> {
    fs::create_dir_all(dir).map_err(|e| FetchError::writing(dir, "", e))?;
    let mut done = Mirrored { pairs: pairs.len(), ..Mirrored::default() };
    for pair in pairs {
        for rec in &pair.files {
            let dest = mirror_attachment_path(dir, &rec.attachment.location);
            let shown = format!("{}/{}", pair.folder_name(), rec.name);
            // `location` was checked to be a relative path of plain components.
            let parent = dest.parent().unwrap_or(dir);
            fs::create_dir_all(parent).map_err(|e| FetchError::writing(parent, "", e))?;
            if fs::metadata(&dest).is_ok_and(|m| m.len() == rec.attachment.size)
                && hash_file(&dest)?.1 == rec.attachment.hash
            {
                ctx.rep.line(&format!("{shown}: already in the mirror"));
                done.kept += 1;
                continue;
            }
            let mut part = dest.clone().into_os_string();
            part.push(".part");
            let part = Path::new(&part);
            download_attachment(ctx, rec, part, &shown)?;
            // Check the content too, so a bad file is found here and not on the offline machine.
            if let Err(e) = decompress_into(ctx, rec, part, None) {
                let _ = fs::remove_file(part);
                return Err(e);
            }
            fs::rename(part, &dest).map_err(|e| FetchError::writing(parent, &rec.name, e))?;
            ctx.rep.line(&format!("{shown}: {} mirrored, verified", human_bytes(rec.attachment.size)));
            done.downloaded += 1;
            done.bytes += rec.attachment.size;
        }
    }
    write_records(dir, pairs)?;
    let index = dir.join("index.json");
    if !index.exists() {
        let doc = json!({
            "project_name": "reseam mirror",
            "capabilities": {"attachments": {"base_url": MIRROR_ATTACHMENTS}},
        });
        write_atomic(&index, &doc)?;
    }
    Ok(done)
}

/// Adds the pairs' records to the mirror's records document (same id: the new one wins).
fn write_records(dir: &Path, pairs: &[&PairModels]) -> Result<(), FetchError> {
    let path = dir.join(RECORDS_PATH);
    let mut list: Vec<Value> = match fs::read(&path) {
        Ok(bytes) => serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|v| v.get("data").and_then(Value::as_array).cloned())
            .ok_or_else(|| FetchError::BadDocument {
                what: "mirror records document",
                location: path.display().to_string(),
                detail: "not a records document; move it away or mirror into an empty folder".into(),
            })?,
        Err(_) => Vec::new(),
    };
    for rec in pairs.iter().flat_map(|p| &p.files) {
        match list.iter_mut().find(|v| v.get("id").and_then(Value::as_str) == Some(rec.id.as_str())) {
            Some(existing) => *existing = rec.raw.clone(),
            None => list.push(rec.raw.clone()),
        }
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| FetchError::writing(parent, "", e))?;
    }
    write_atomic(&path, &json!({ "data": list }))
}

fn write_atomic(path: &Path, doc: &Value) -> Result<(), FetchError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = Path::new(&tmp);
    // Serializing a Value cannot fail.
    let bytes = serde_json::to_vec_pretty(doc).expect("JSON value serializes");
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        fs::rename(tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(tmp);
        FetchError::writing(path, &name, e)
    })
}
