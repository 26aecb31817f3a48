//! The signed PDF: a real one-page document naming the signers, with an unreferenced
//! padding stream that brings it to any size asked (for download benchmarks) while the
//! sandbox holds only its head and tail.

use crate::clock::rfc3339;

use super::Document;

impl Document {
    /// The PDF's parts: the bytes before the padding, the padding length, the bytes after.
    pub(super) fn pdf(&self) -> (Vec<u8>, u64, Vec<u8>) {
        let mut lines = vec![
            "Signed document".to_owned(),
            format!("Name: {}", self.name),
            format!("Document id: {}", self.id),
            format!("File: {}", self.filename),
        ];
        for signer in &self.signers {
            let when = signer.signed_at.map(rfc3339).unwrap_or_default();
            lines.push(format!(
                "Signed by {} <{}> at {when}",
                signer.name, signer.email
            ));
        }
        if let Some(at) = self.completed_at {
            lines.push(format!("Completed at {}", rfc3339(at)));
        }
        pdf_parts(&lines, self.pdf_size)
    }
}

/// Escapes a line for a PDF literal string (ASCII only).
fn pdf_text(line: &str) -> String {
    line.chars()
        .map(|c| match c {
            '(' | ')' | '\\' => format!("\\{c}"),
            c if c.is_ascii() && !c.is_ascii_control() => c.to_string(),
            _ => "?".to_owned(),
        })
        .collect()
}

/// A one-page PDF showing `lines`, with an unreferenced padding stream that brings the
/// file to `size` bytes when asked (and the size allows).
fn pdf_parts(lines: &[String], size: Option<u64>) -> (Vec<u8>, u64, Vec<u8>) {
    let mut content = String::from("BT /F1 12 Tf 72 720 Td 18 TL");
    for line in lines {
        content.push_str(&format!(" ({}) Tj T*", pdf_text(line)));
    }
    content.push_str(" ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>".to_owned(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
    ];
    let mut head = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(head.len());
        head.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    offsets.push(head.len());
    let tail_of = |pad: u64, head: &[u8]| -> Vec<u8> {
        let mut tail = b"\nendstream\nendobj\n".to_vec();
        let xref = head.len() as u64 + pad + tail.len() as u64;
        tail.extend_from_slice(b"xref\n0 7\n0000000000 65535 f \n");
        for offset in &offsets {
            tail.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
        }
        tail.extend_from_slice(
            format!("trailer\n<< /Size 7 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
        );
        tail
    };
    // The padding object's header holds its length, whose digits move everything after
    // it: settle the numbers in a few rounds.
    let mut pad = 0u64;
    for _ in 0..4 {
        let mut with_header = head.clone();
        with_header.extend_from_slice(format!("6 0 obj\n<< /Length {pad} >>\nstream\n").as_bytes());
        let fixed = with_header.len() as u64 + tail_of(pad, &with_header).len() as u64;
        pad = size.map_or(0, |s| s.saturating_sub(fixed));
    }
    head.extend_from_slice(format!("6 0 obj\n<< /Length {pad} >>\nstream\n").as_bytes());
    let tail = tail_of(pad, &head);
    (head, pad, tail)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn assemble(lines: &[String], size: Option<u64>) -> Vec<u8> {
        let (head, pad, tail) = pdf_parts(lines, size);
        let mut out = head;
        out.extend(std::iter::repeat_n(b'0', pad as usize));
        out.extend(tail);
        out
    }

    #[test]
    fn the_pdf_is_well_formed_and_reaches_the_size_asked() {
        let lines = vec!["Signed by Ada (CEO) <ada@example.com>".to_owned()];
        let natural = assemble(&lines, None);
        assert!(natural.starts_with(b"%PDF-1.4\n"));
        assert!(natural.ends_with(b"%%EOF\n"));
        let text = String::from_utf8(natural.clone()).unwrap();
        assert!(text.contains("(Signed by Ada \\(CEO\\) <ada@example.com>) Tj"));
        // Each xref entry points at its object.
        let xref_at: usize = text
            .rsplit("startxref\n")
            .next()
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(text[xref_at..].starts_with("xref\n0 7\n"));
        for (i, line) in text[xref_at..].lines().skip(3).take(6).enumerate() {
            let offset: usize = line[..10].parse().unwrap();
            assert!(
                text[offset..].starts_with(&format!("{} 0 obj", i + 1)),
                "object {}",
                i + 1
            );
        }
        for size in [5_000u64, 1 << 20, 123_457] {
            let padded = assemble(&lines, Some(size));
            assert_eq!(padded.len() as u64, size);
            let text = String::from_utf8_lossy(&padded);
            let xref_at: usize = text
                .rsplit("startxref\n")
                .next()
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(text[xref_at..].starts_with("xref\n"), "size {size}");
        }
    }
}
