// Another checkout, for the TypeScript scripts: one implementation, in checkout.mjs.
export { otherCheckout } from './checkout.mjs'
