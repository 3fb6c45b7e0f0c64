//! The benchmark's chart: backing-store reads over time, one line per way
//! of making the change, drawn as SVG.

use std::error::Error;
use std::path::Path;

use plotters::prelude::*;

/// One line of the chart.
pub(crate) struct Line {
    /// Its legend entry.
    pub(crate) label: String,
    /// Okabe–Ito colours, told apart with the common colour blindnesses.
    pub(crate) color: RGBColor,
    /// (seconds since the change, reads in that 100 ms).
    pub(crate) points: Vec<(f64, u64)>,
}

/// Vermillion, blue and bluish green of the Okabe–Ito palette.
pub(crate) const COLORS: [RGBColor; 3] = [
    RGBColor(213, 94, 0),
    RGBColor(0, 114, 178),
    RGBColor(0, 158, 115),
];

/// Draws `lines` into an SVG file at `path`.
pub(crate) fn draw(path: &Path, title: &str, lines: &[Line]) -> Result<(), Box<dyn Error>> {
    let root = SVGBackend::new(path, (960, 440)).into_drawing_area();
    root.fill(&WHITE)?;
    let points = lines.iter().flat_map(|l| l.points.iter());
    let (mut x_min, mut x_max, mut y_max) = (0f64, 1f64, 1u64);
    for &(x, y) in points {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_max = y_max.max(y);
    }
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x_min..x_max, 0f64..(y_max as f64 * 1.08))?;
    chart
        .configure_mesh()
        .x_desc("seconds since the change started")
        .y_desc("backing-store reads per 100 ms")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for line in lines {
        let color = line.color;
        chart
            .draw_series(LineSeries::new(
                line.points.iter().map(|&(x, y)| (x, y as f64)),
                color.stroke_width(2),
            ))?
            .label(line.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()?;
    root.present()?;
    Ok(())
}
