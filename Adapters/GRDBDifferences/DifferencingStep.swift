#if GRDB
// Built with the package trait GRDB only.
import GRDB

/// The reducers of an observation made by this module's operators: GRDB's
/// own `map` and `removeDuplicates(by:)` reducers, chained around
/// ``DifferencingStep`` so that each run of the observation keeps its own
/// state.
///
/// Spelled out, the type of `ValueObservation.tracking { ... }.setDifferences()`
/// is `ValueObservation<DifferencesReducer<ValueReducers.Fetch<[Player]>, SetDifference<Player>>>`.
public typealias DifferencesReducer<Base: ValueReducer, Output: Sendable> = ValueReducers.Map<
    ValueReducers.RemoveDuplicates<ValueReducers.Map<Base, DifferencingStep<Base.Value, Output>>>, Output
>

/// One value of a differences observation on its way through GRDB's
/// reducers. It appears in the type of the observations of this module
/// (see ``DifferencesReducer``) and has no public API.
///
/// GRDB's public API has no way to declare a reducer of one's own, and a
/// difference needs state that lives as long as one run of the observation
/// (one `start`, one subscription): the previous elements. GRDB's
/// `removeDuplicates(by:)` reducer has exactly that lifetime for the
/// previous value it remembers, so the bridge chains three of GRDB's
/// operators:
///
/// 1. `map` wraps each fetched value in a fresh step;
/// 2. `removeDuplicates(by:)` calls its predicate with the step of the
///    previous delivered value and the new step: the new step takes over
///    the run's differencer from the previous one, computes the difference,
///    and the predicate answers "duplicate" when the difference is empty, so
///    that GRDB delivers nothing (and keeps the previous step, whose state is
///    the same);
/// 3. `map` returns the difference. GRDB calls no predicate for the first
///    value of a run: this last step then makes the run's differencer, and
///    computes the first difference with it.
///
/// `@unchecked Sendable`: GRDB calls the reducers of one run serially (its
/// observers only touch a run's reducer on one serial queue at a time), and
/// a step is only touched from those calls, which hand it from one to the
/// next.
public final class DifferencingStep<Input, Output>: @unchecked Sendable {
    /// Computes the output of an input and says whether it is empty (not
    /// delivered), updating the state of the run it captures.
    typealias Differencer = (Input) throws -> (output: Output, isEmpty: Bool)

    /// The fetched value; released once the difference is computed.
    private var input: Input?
    /// The differencer of the run, set once the step is processed.
    private var differencer: Differencer?
    /// The output of the step, until the last reducer takes it.
    private var result: Result<Output, any Error>?

    init(_ input: Input) {
        self.input = input
    }

    /// Continues the run of `previous`: computes the difference of this
    /// step with the previous step's differencer.
    ///
    /// - Returns: True when the difference is empty: GRDB then skips the value.
    func continueRun(from previous: DifferencingStep) -> Bool {
        // The previous step was processed: by this method, or by
        // `output(makeDifferencer:)` for the first value of the run.
        guard let differencer = previous.differencer else {
            preconditionFailure("GRDBDifferences: a value reached removeDuplicates before the previous one was processed.")
        }
        return process(with: differencer)
    }

    /// The output of the step. For the first value of a run, which GRDB
    /// passes through `removeDuplicates` without calling its predicate,
    /// makes the run's differencer and computes the output first.
    ///
    /// - Throws: The error of the differencer (a decoding error, duplicate ids).
    func output(makeDifferencer: () -> Differencer) throws -> Output {
        if differencer == nil {
            _ = process(with: makeDifferencer())
        }
        guard let result else {
            preconditionFailure("GRDBDifferences: the output of a value was read twice.")
        }
        self.result = nil
        return try result.get()
    }

    private func process(with differencer: @escaping Differencer) -> Bool {
        self.differencer = differencer
        guard let input else {
            preconditionFailure("GRDBDifferences: a value was processed twice.")
        }
        self.input = nil
        do {
            let (output, isEmpty) = try differencer(input)
            result = .success(output)
            return isEmpty
        } catch {
            // Not a duplicate: the last reducer throws the error.
            result = .failure(error)
            return false
        }
    }
}

extension ValueObservation {
    /// The observation of the outputs of a differencer, one per run, fed
    /// with the values of this observation. Empty outputs are not
    /// delivered, except the first one of a run (GRDB always delivers a
    /// first value).
    ///
    /// - Parameter makeDifferencer: Makes the differencer of one run. Called
    ///   on the run's reducer queue, once per run.
    func differences<Output: Sendable>(
        makeDifferencer: @escaping @Sendable () -> DifferencingStep<Reducer.Value, Output>.Differencer
    ) -> ValueObservation<DifferencesReducer<Reducer, Output>> {
        map { DifferencingStep($0) }
            .removeDuplicates { previous, step in step.continueRun(from: previous) }
            .map { step in try step.output(makeDifferencer: makeDifferencer) }
    }
}

#endif
