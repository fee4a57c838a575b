extension Duration {
    /// The duration in whole nanoseconds, for Dispatch's deadlines: at least
    /// `minimum`, and `Int.max` beyond about 292 years (where `Int`
    /// nanoseconds overflow: never, in effect).
    func clampedNanoseconds(minimum: Int = 0) -> Int {
        let (seconds, attoseconds) = components
        guard seconds < Int64(Int.max / 1_000_000_000) else { return Int.max }
        return max(minimum, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
