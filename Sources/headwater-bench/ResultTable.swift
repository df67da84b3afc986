/// One line of `headwater-bench all`'s final table.
struct ResultRow {
    enum Verdict: String {
        case met
        case notMet = "NOT met"
        /// No target: the figures are for reading.
        case none = "—"
        case failed = "FAILED"
        case notApplicable = "n/a"
    }

    var workload: String
    var headwater: String
    var nginx: String = "—"
    /// Headwater ÷ nginx, req/s (or MB/s).
    var rateRatio: String = "—"
    /// Headwater ÷ nginx, server CPU µs per request (or per MiB).
    var cpuRatio: String = "—"
    var target: String = "—"
    var verdict: Verdict = .none
}

enum ResultTable {
    static let header = ResultRow(
        workload: "workload", headwater: "Headwater (rate, p50/p99, CPU)", nginx: "nginx (rate, p50/p99, CPU)", rateRatio: "req/s H/n", cpuRatio: "CPU H/n",
        target: "target", verdict: .none)

    /// The rows as a Markdown table, columns padded to their widest cell.
    static func render(_ rows: [ResultRow]) -> String {
        func cells(_ row: ResultRow, header: Bool) -> [String] {
            [row.workload, row.headwater, row.nginx, row.rateRatio, row.cpuRatio, row.target, header ? "met" : row.verdict.rawValue]
        }
        let table = [cells(header, header: true)] + rows.map { cells($0, header: false) }
        let widths = (0..<7).map { column in table.map { $0[column].count }.max() ?? 0 }
        let rightAligned: Set<Int> = [3, 4]
        func line(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { column, cell in
                rightAligned.contains(column) ? leftPad(cell, widths[column]) : pad(cell, widths[column])
            }.joined(separator: " | ") + " |"
        }
        let rule = "|" + widths.enumerated().map { column, width in
            rightAligned.contains(column) ? String(repeating: "-", count: width + 1) + ":" : String(repeating: "-", count: width + 2)
        }.joined(separator: "|") + "|"
        return ([line(table[0]), rule] + table.dropFirst().map(line)).joined(separator: "\n")
    }
}
