import { describe, expect, it } from 'vitest';
import { budgetedPage } from '../../src/http/pagination.ts';

const pages = (sizes: number[], perPage: number, budget: number) => {
  const first = budgetedPage({ per_page: perPage }, sizes, budget);
  return Array.from({ length: first.last }, (_, i) => {
    const page = budgetedPage({ page: i + 1, per_page: perPage }, sizes, budget);
    return sizes.slice(page.offset, page.offset + page.limit);
  });
};

describe('budgetedPage', () => {
  it.each([
    // sizes, per page, budget, the pages of results
    [[], 100, 10, [[]]],
    [[1, 1, 1], 100, 10, [[1, 1, 1]]],
    [[1, 1, 1], 2, 10, [[1, 1], [1]]],
    [[4, 4, 4, 4], 100, 10, [[4, 4], [4, 4]]],
    [[4, 6, 1], 100, 10, [[4, 6], [1]]],
    // an item larger than the budget is a page of its own
    [[3, 50, 3], 100, 10, [[3], [50], [3]]],
    [[50, 50], 100, 10, [[50], [50]]],
  ])('%j, %i per page, budget %i: %j', (sizes, perPage, budget, expected) => {
    expect(pages(sizes, perPage, budget)).toEqual(expected);
  });

  it('pages lead through every item once, in order, whichever page is asked for', () => {
    const sizes = Array.from({ length: 500 }, (_, i) => (i * 7919) % 97);
    const seen = pages(sizes, 30, 400).flat();
    expect(seen).toEqual(sizes);
    expect(pages(sizes, 30, 400).every((page) => page.length <= 30 && (page.length === 1 || page.reduce((a, b) => a + b, 0) <= 400))).toBe(true);
  });

  it('counts pages for the Link headers, and a page past the end is empty', () => {
    const page = budgetedPage({ page: 9, per_page: 2 }, [1, 1, 1], 10);
    expect([page.last, page.limit]).toEqual([2, 0]);
    expect(budgetedPage({}, [], 10).last).toBe(1);
  });
});
