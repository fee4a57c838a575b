/// A raw SQLite value, generic over how its text and blob are held: the
/// value types of this package and of GRDB map to it, and compare through
/// `SQLiteBinaryOrder`.
package enum SQLiteRawValue<Text, Blob> {
    case null
    case integer(Int64)
    case real(Double)
    case text(Text)
    case blob(Blob)
}
