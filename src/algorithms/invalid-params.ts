// What a module throws to refuse its input: the caller's fault, answered 400 VALIDATION_ERROR rather than
// 500 ALGORITHM_ERROR. The service knows it by its `name` alone (it crosses a thread as plain data), so a
// module that imports nothing of ours throws any error named so, with an optional string `field`.
export class InvalidParamsError extends Error {
  override name = 'InvalidParamsError'
  /** The params member at fault, as a path of names joined by dots ('n', 'items.0'); none for the whole. */
  readonly field: string | undefined

  constructor(message: string, field?: string) {
    super(message)
    this.field = field
  }
}
