import type { Faker } from "@faker-js/faker";
// Faker's class with the locale-free definitions only: what a start needs (ids, jti).
import { faker as baseFaker } from "@faker-js/faker/locale/base";

type Definitions = Faker["definitions"];

/** A sandbox's one seeded Faker, and the way to wait for its English definitions. */
export interface SeededFaker {
  readonly faker: Faker;
  /** Resolves once `faker` has the English definitions (names, words …); loads them on the first call. */
  readonly english: () => Promise<void>;
}

/**
 * The sandbox's Faker, seeded. Its ids and jti (faker.string, faker.helpers) need no locale, and
 * only scenario templates ({{faker.person.fullName}} …) need the English definitions: loading and
 * compiling those is a noticeable part of a start (docs/performance.md#start), so they load when a
 * template first needs them (`english`), not at start. The Faker reads its
 * definitions through a locale that forwards to the locale-free ones until then, the English ones
 * after (Faker takes a ready locale proxy as its locale and keeps it as is). One Faker and one
 * random sequence throughout: a seed gives the same values as when the English definitions were
 * there from the start.
 */
export function seededFaker(seed: number): SeededFaker {
  let definitions: Definitions = baseFaker.definitions;
  const locale = new Proxy({} as Definitions, {
    get: (_target, key) => Reflect.get(definitions, key),
    has: (_target, key) => Reflect.has(definitions, key),
  });
  const FakerClass = baseFaker.constructor as new (options: { locale: Definitions }) => Faker;
  const faker = new FakerClass({ locale });
  faker.seed(seed);
  let loading: Promise<void> | undefined;
  const english = () =>
    (loading ??= import("@faker-js/faker/locale/en").then(
      ({ faker: englishFaker }) => {
        definitions = englishFaker.definitions;
      },
      (error: unknown) => {
        // Not kept: the next template tries again rather than failing for good.
        loading = undefined;
        throw error;
      },
    ));
  return { faker, english };
}
