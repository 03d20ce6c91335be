//! Column-aligned text tables, the way iproute2 and SONiC tools print them.

#[derive(Debug)]
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[&str]) -> Table {
        Table { rows: vec![headers.iter().map(|h| h.to_string()).collect()] }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn widths(&self) -> Vec<usize> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        (0..columns)
            .map(|c| self.rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
            .collect()
    }

    /// Left-aligned columns, two spaces apart.
    pub fn print(&self) {
        print!("{}", self.render());
    }

    /// What `print` prints.
    pub fn render(&self) -> String {
        let widths = self.widths();
        let mut text = String::new();
        for row in &self.rows {
            let cells: Vec<String> = row.iter().zip(&widths).map(|(cell, &w)| format!("{cell:<w$}")).collect();
            text.push_str(cells.join("  ").trim_end());
            text.push('\n');
        }
        text
    }

    /// Right-aligned columns with a dashed rule under the header (SONiC style).
    pub fn print_right_aligned(&self) {
        let widths = self.widths();
        for (index, row) in self.rows.iter().enumerate() {
            let cells: Vec<String> = row.iter().zip(&widths).map(|(cell, &w)| format!("{cell:>w$}")).collect();
            println!("{}", cells.join("  "));
            if index == 0 {
                println!("{}", widths.iter().map(|&w| "-".repeat(w)).collect::<Vec<_>>().join("  "));
            }
        }
    }
}
