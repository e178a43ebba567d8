// The one function the standalone checker takes from @noble/curves (MIT, webui/checker/vendor/LICENSE-noble): whether
// a drand quicknet signature (a compressed BLS12-381 G1 point, hex) is the key's for a round. scripts/vendor-noble
// bundles this file with its library into noble-bls.b64; launcher/checker.py inlines that as it is.
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { sha256 } from '@noble/hashes/sha2.js';

export function drandG1Verify(round, signatureHex, publicKeyHex, dst) {
  const message = new Uint8Array(8);
  new DataView(message.buffer).setBigUint64(0, BigInt(round));
  const sigs = bls12_381.shortSignatures;
  try {
    const point = sigs.hash(sha256(message), dst);
    return sigs.verify(sigs.Signature.fromHex(signatureHex), point, bls12_381.G2.Point.fromHex(publicKeyHex));
  } catch {
    return false; // not a point of the curve, or outside its group
  }
}
