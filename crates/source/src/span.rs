use std::ops::Range;

/// A half-open byte range `[start, end)` in the [`SourceMap`]'s global offset space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const DUMMY: Span = Span { start: 0, end: 0 };

    pub fn new(start: u32, end: u32) -> Span {
        debug_assert!(start <= end);
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn len(self) -> u32 {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId(pub u32);

/// One file's text and where it sits in the global offset space.
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// Global offset of the file's first byte.
    pub base: u32,
    /// Byte offsets (file-relative) at which each line starts.
    line_starts: Vec<u32>,
}

impl SourceFile {
    fn new(name: String, text: String, base: u32) -> SourceFile {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i as u32 + 1));
        SourceFile {
            name,
            text,
            base,
            line_starts,
        }
    }

    /// Global span of the whole file.
    pub fn span(&self) -> Span {
        Span::new(self.base, self.base + self.text.len() as u32)
    }

    /// 1-based line and 1-based column (in characters) of a global offset in this file.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let rel = offset.saturating_sub(self.base).min(self.text.len() as u32);
        let line = self.line_starts.partition_point(|&s| s <= rel) - 1;
        let start = self.line_starts[line] as usize;
        let col = self.text[start..rel as usize].chars().count();
        (line + 1, col + 1)
    }

    /// Text of a 1-based line, without its newline.
    pub fn line_text(&self, line: usize) -> &str {
        let start = self.line_starts[line - 1] as usize;
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&e| e as usize);
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// File-relative byte range of a global span that lies in this file.
    pub fn local_range(&self, span: Span) -> Range<usize> {
        let len = self.text.len() as u32;
        let s = span.start.saturating_sub(self.base).min(len);
        let e = span.end.saturating_sub(self.base).min(len);
        s as usize..e as usize
    }
}

/// All files of one compilation.
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file; its spans start after every file added before it (plus one
    /// byte, so an end-of-file span never touches the next file).
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let base = self
            .files
            .last()
            .map_or(0, |f| f.base + f.text.len() as u32 + 1);
        self.files
            .push(SourceFile::new(name.into(), text.into(), base));
        FileId(self.files.len() as u32 - 1)
    }

    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    /// The file a global offset falls in.
    pub fn file_of(&self, offset: u32) -> Option<&SourceFile> {
        // Expanded code (see `Expansions`) is resolved before it is shown.
        if offset >= crate::VIRTUAL_BASE {
            return None;
        }
        let i = self.files.partition_point(|f| f.base <= offset);
        i.checked_sub(1).map(|i| &self.files[i])
    }

    /// Source text covered by a span.
    pub fn snippet(&self, span: Span) -> &str {
        match self.file_of(span.start) {
            Some(f) => &f.text[f.local_range(span)],
            None => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based_and_per_file() {
        let mut map = SourceMap::new();
        let a = map.add("a.bt", "ab\ncd\n");
        let b = map.add("b.bt", "xyz");
        let fa = map.file(a);
        assert_eq!(fa.line_col(0), (1, 1));
        assert_eq!(fa.line_col(4), (2, 2));
        assert_eq!(fa.line_text(2), "cd");
        let fb = map.file(b);
        assert_eq!(fb.base, 7);
        assert_eq!(map.file_of(8).unwrap().name, "b.bt");
        assert_eq!(fb.line_col(8), (1, 2));
        assert_eq!(map.snippet(Span::new(8, 10)), "yz");
    }
}
