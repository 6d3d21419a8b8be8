// The jobs picked on the history page for comparing: an ordered list of ids (the first is the
// baseline), kept in sessionStorage so it survives paging and filtering.
const KEY = 'mculab.compare';
export const MAX_COMPARE = 8;

// Pure list operation: adds id at the end or removes it; never more than max ids.
export function toggleId(ids, id, max = MAX_COMPARE) {
  if (ids.includes(id)) return ids.filter((x) => x !== id);
  if (ids.length >= max) return ids;
  return [...ids, id];
}

export function loadSelection() {
  try {
    const v = JSON.parse(sessionStorage.getItem(KEY) || '[]');
    return Array.isArray(v) ? v.filter((x) => Number.isSafeInteger(x) && x > 0).slice(0, MAX_COMPARE) : [];
  } catch {
    return [];
  }
}

export function saveSelection(ids) {
  try {
    sessionStorage.setItem(KEY, JSON.stringify(ids));
  } catch {
    // storage disabled: the selection lasts until the next page load
  }
}
