// node --test: the strategy picks one of the legal actions, in every phase.
import { test } from "node:test";
import assert from "node:assert/strict";
import { choose, strength } from "./strategy.js";

const bids = (...values) => values.map((value) => ({ type: "bid", value }));
const plays = (...cards) => cards.map((card) => ({ type: "play", card }));
const PASS = { type: "pass" };
const HOLD = { type: "hold" };

function assertLegal(view) {
  const action = choose(view);
  assert.ok(
    view.legal.some((a) => JSON.stringify(a) === JSON.stringify(action)),
    `${JSON.stringify(action)} is not in ${JSON.stringify(view.legal)}`,
  );
  return action;
}

test("bidding: pass without two jacks", () => {
  const view = { phase: "bidding", hand: ["CJ", "C7", "S8"], legal: [PASS, ...bids(18, 20)] };
  assert.deepEqual(assertLegal(view), PASS);
});

test("bidding: the lowest bid with two jacks, hold when answering", () => {
  const hand = ["CJ", "SJ", "C7"];
  assert.deepEqual(assertLegal({ phase: "bidding", hand, legal: [PASS, ...bids(20, 18, 22)] }), { type: "bid", value: 18 });
  assert.deepEqual(assertLegal({ phase: "bidding", hand, bid: 18, legal: [HOLD, PASS] }), HOLD);
  assert.deepEqual(assertLegal({ phase: "bidding", hand, bid: 40, legal: [HOLD, PASS] }), PASS);
  assert.deepEqual(assertLegal({ phase: "bidding", hand, legal: [PASS, ...bids(40, 44)] }), PASS);
});

test("skat, discard, declare, doubling", () => {
  assert.deepEqual(assertLegal({ phase: "skat", legal: [{ type: "pickup" }, { type: "declare", game: "C" }] }), { type: "pickup" });
  const discards = [
    { type: "discard", cards: ["CJ", "CA"] },
    { type: "discard", cards: ["C7", "H8"] },
    { type: "discard", cards: ["CA", "H8"] },
  ];
  assert.deepEqual(assertLegal({ phase: "discard", legal: discards }), discards[1]);
  const declares = ["C", "S", "H", "D", "G", "N"].map((game) => ({ type: "declare", game }));
  const hand = ["CJ", "H7", "H8", "HA", "S7", "D9"];
  assert.deepEqual(assertLegal({ phase: "declare", hand, legal: declares }), { type: "declare", game: "H" });
  assert.deepEqual(assertLegal({ phase: "doubling", legal: [{ type: "kontra" }, PASS] }), PASS);
});

test("playing: the weakest legal card", () => {
  const legal = plays("CJ", "HA", "S7", "H7");
  assert.equal(assertLegal({ phase: "playing", game: { game: "S" }, legal }).card, "H7");
  assert.equal(assertLegal({ phase: "playing", game: { game: "G" }, legal }).card, "S7");
  assert.equal(assertLegal({ phase: "playing", game: { game: "N" }, legal: plays("CJ", "HA", "ST") }).card, "ST");
  assert.ok(strength("CJ", { game: "D" }) > strength("SJ", { game: "D" }));
  assert.ok(strength("D7", { game: "D" }) > strength("CA", { game: "D" }));
  assert.ok(strength("CJ", null) > strength("CA", null)); // a Ramsch: jacks are the trumps
});

test("an unknown phase still gets a legal action; none is an error", () => {
  assert.deepEqual(assertLegal({ phase: "something_new", legal: [{ type: "resign" }] }), { type: "resign" });
  assert.throws(() => choose({ phase: "playing", legal: [] }));
});
