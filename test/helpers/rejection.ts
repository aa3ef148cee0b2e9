// What a promise was rejected with, asserted to be of the expected error class: the use-case tests'
// refusals (a ConfigError, an InvalidFilesError, …) checked for their class, then read for their words.
import { expect } from "vitest";

export async function rejectedWith<E extends Error>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => E,
): Promise<E> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  return error as E;
}
