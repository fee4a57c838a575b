import ArgumentParser

/// The output formats of `--format`: `TableRenderer` and `JSONRenderer`.
enum OutputFormat: String, CaseIterable, ExpressibleByArgument {
    case table
    case json
}
