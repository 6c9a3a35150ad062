// The Snowball Russian stemmer lives in driver/ (every system may import it; a system never imports
// another). Used here as a named, weaker resolver signal ("stem") and for documentation ranking —
// never to turn two different names into one exact match.
export { stem, stemWord } from "../../driver/russian-stem";
