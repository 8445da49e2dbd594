// The bot's strategy: a pure function from a seat's view to one of its legal actions.
//
// `view` is `update.view` of an Update (protocol/views.py: PlayerView) as JSON: `hand`, `phase`,
// `game`, `legal` (the commands this seat may send now, e.g. {"type": "play", "card": "CJ"}), ...
// Whatever it decides, `choose` returns a copy of an element of `view.legal`, so it never sends
// an illegal command. It is deliberately simple, not good Skat.

const SUITS = "CSHD"; // clubs, spades, hearts, diamonds
const JACK_ORDER = ["DJ", "HJ", "SJ", "CJ"]; // ascending: the club jack is the highest trump
const SUIT_ORDER = "789QKTA"; // ascending ranks in suit and grand games (jacks aside)
const NULL_ORDER = "789TJQKA"; // ascending ranks in null: no trumps, jacks in their suit
const POINTS = { 7: 0, 8: 0, 9: 0, T: 10, J: 2, Q: 3, K: 4, A: 11 };

/** Bid only with this many jacks... */
export const MIN_JACKS = 2;
/** ...and not above this value (the lowest suit game with 2 jacks is worth 18-36). */
export const MAX_BID = 36;

const isJack = (card) => card[1] === "J";
const suitOf = (card) => card[0];
const rankOf = (card) => card[1];

/**
 * How strong `card` is in `game` (a Declaration like {"game": "C"}; null or missing in a Ramsch,
 * where only the jacks are trumps): a bigger number beats a smaller one of the same class.
 */
export function strength(card, game) {
  const kind = game && game.game;
  if (kind === "N") return NULL_ORDER.indexOf(rankOf(card));
  if (isJack(card)) return 200 + JACK_ORDER.indexOf(card);
  const plain = SUIT_ORDER.indexOf(rankOf(card));
  return kind && kind !== "G" && suitOf(card) === kind ? 100 + plain : plain;
}

function byType(legal) {
  const out = {};
  for (const action of legal) (out[action.type] ??= []).push(action);
  return out;
}

/** A plain declaration (no schneider, schwarz or ouvert announced) of `game`, if legal. */
function plainDeclare(declares, game) {
  return declares.find((d) => d.game === game && !d.schneider && !d.schwarz && !d.ouvert);
}

function longestSuit(hand) {
  const counts = {};
  for (const card of hand) if (!isJack(card)) counts[suitOf(card)] = (counts[suitOf(card)] ?? 0) + 1;
  // Ties go to the more valuable suit (clubs first).
  return [...SUITS].reduce((best, s) => ((counts[s] ?? 0) > (counts[best] ?? 0) ? s : best), "C");
}

function keepValue(card) {
  // Discard the cheapest cards: jacks are kept, then aces and tens, then the rest by rank.
  return isJack(card) ? 1000 : POINTS[rankOf(card)] * 10 + SUIT_ORDER.indexOf(rankOf(card));
}

/** One of `view.legal`, chosen by the phase: see the README for the strategy in words. */
export function choose(view) {
  const legal = view.legal ?? [];
  if (legal.length === 0) throw new Error(`no legal action in phase ${view.phase}`);
  const t = byType(legal);
  const hand = view.hand ?? [];
  let pick;
  switch (view.phase) {
    case "bidding": {
      const jacks = hand.filter(isJack).length;
      if (jacks >= MIN_JACKS) {
        const bids = (t.bid ?? []).filter((b) => b.value <= MAX_BID);
        if (bids.length) pick = bids.reduce((lo, b) => (b.value < lo.value ? b : lo));
        else if (t.hold && view.bid <= MAX_BID) pick = t.hold[0];
      }
      pick ??= t.pass?.[0];
      break;
    }
    case "skat":
      pick = t.pickup?.[0];
      break;
    case "discard": {
      const cost = (d) => keepValue(d.cards[0]) + keepValue(d.cards[1]);
      pick = (t.discard ?? []).reduce((lo, d) => (lo === undefined || cost(d) < cost(lo) ? d : lo), undefined);
      break;
    }
    case "declare": {
      const declares = t.declare ?? [];
      pick = plainDeclare(declares, longestSuit(hand)) ?? declares.find((d) => d.game !== "N" && !d.schneider) ?? declares[0];
      break;
    }
    case "doubling":
      pick = t.pass?.[0];
      break;
    case "playing": {
      const plays = t.play ?? [];
      const weight = (a) => strength(a.card, view.game);
      // The weakest card; between equals, the one worth fewer points, then the first listed.
      pick = plays.reduce(
        (lo, a) =>
          lo === undefined || weight(a) < weight(lo) || (weight(a) === weight(lo) && POINTS[rankOf(a.card)] < POINTS[rankOf(lo.card)])
            ? a
            : lo,
        undefined,
      );
      break;
    }
    default:
      break;
  }
  return { ...(pick ?? legal[0]) };
}
