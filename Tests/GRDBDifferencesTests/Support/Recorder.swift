#if GRDB
// Built with the package trait GRDB only.
import Dispatch
import Foundation
import GRDB
import Testing

import TestSupport

// Recording the values of GRDB observations in TestSupport's `Recorder`.

extension ValueObservation where Reducer: ValueReducer {
    /// Starts the observation on a serial queue of its own, recording its
    /// values in `recorder` and its error in `errors`.
    func record(
        in reader: any DatabaseReader,
        into recorder: Recorder<Reducer.Value>,
        errors: Recorder<any Error>? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> AnyDatabaseCancellable {
        start(
            in: reader, scheduling: .async(onQueue: DispatchQueue(label: "GRDBDifferencesTests")),
            onError: { error in
                if let errors {
                    errors.append(error)
                } else {
                    Issue.record(error, sourceLocation: sourceLocation)
                }
            },
            onChange: recorder.append)
    }
}

#endif
